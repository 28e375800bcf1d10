/*
 * openssl-aead: OpenSSL's ChaCha20-Poly1305 one whole message at a time,
 * as an application seals and opens through the EVP interface: per
 * message, the nonce set (which makes OpenSSL compute the Poly1305 key,
 * block 0), 13 bytes of additional data, the message, and the tag
 * produced (seal) or checked (open). scripts/bench-aead.sh builds and
 * runs it beside `openssl speed`, whose -aead loop for this cipher (3.0)
 * only streams updates into one context: no nonce, additional data or tag
 * per message.
 *
 * Usage: openssl-aead seal|open BYTES SECONDS
 * Prints "+F:0:ChaCha20-Poly1305:<bytes per second>" like `openssl speed
 * -mr`. Exits non-zero if OpenSSL refuses a call or a tag fails to check.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "openssl-aead: %s failed\n", what);
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "seal") && strcmp(argv[1], "open"))) {
        fprintf(stderr, "usage: openssl-aead seal|open BYTES SECONDS\n");
        return 2;
    }
    int open = !strcmp(argv[1], "open");
    int n = atoi(argv[2]);
    double seconds = atof(argv[3]);
    unsigned char key[32], nonce[12] = {0}, aad[13], tag[16];
    unsigned char *msg = malloc(n + 1), *buf = malloc(n + 1);
    int outl, fin;
    memset(key, 0x5a, sizeof key);
    memset(aad, 0xcc, sizeof aad);
    memset(msg, 0xa5, n + 1);

    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL || !EVP_CipherInit_ex(ctx, EVP_chacha20_poly1305(), NULL, key, nonce, 1))
        die("setting the key");
    if (open) {
        /* One sealed message to open again and again, each time from its
         * nonce, as a receiver of a fresh message would. */
        if (!EVP_EncryptUpdate(ctx, NULL, &outl, aad, sizeof aad)
            || !EVP_EncryptUpdate(ctx, msg, &outl, msg, n)
            || !EVP_EncryptFinal_ex(ctx, msg + outl, &fin)
            || !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, sizeof tag, tag))
            die("sealing the message to open");
        if (!EVP_CipherInit_ex(ctx, NULL, NULL, NULL, NULL, 0))
            die("switching to opening");
    }

    long count = 0;
    double start = now(), elapsed;
    do {
        for (int i = 0; i < 256; i++, count++) {
            if (open) {
                if (!EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, nonce)
                    || !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, sizeof tag, tag)
                    || !EVP_DecryptUpdate(ctx, NULL, &outl, aad, sizeof aad)
                    || !EVP_DecryptUpdate(ctx, buf, &outl, msg, n))
                    die("opening");
                if (EVP_DecryptFinal_ex(ctx, buf + outl, &fin) != 1)
                    die("checking the tag");
            } else {
                /* A fresh nonce per message, as a sender uses. */
                for (int b = 0; b < 8 && ++nonce[b] == 0; b++)
                    ;
                if (!EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce)
                    || !EVP_EncryptUpdate(ctx, NULL, &outl, aad, sizeof aad)
                    || !EVP_EncryptUpdate(ctx, buf, &outl, msg, n)
                    || !EVP_EncryptFinal_ex(ctx, buf + outl, &fin)
                    || !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, sizeof tag, tag))
                    die("sealing");
            }
        }
        elapsed = now() - start;
    } while (elapsed < seconds);
    printf("+F:0:ChaCha20-Poly1305:%.2f\n", (double)count * n / elapsed);
    EVP_CIPHER_CTX_free(ctx);
    free(msg);
    free(buf);
    return 0;
}
