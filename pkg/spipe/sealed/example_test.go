package sealed_test

import (
	"bytes"
	"fmt"
	"io"
	"log"

	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

func Example() {
	// A key, as `spipe keygen` writes it (spipe.LoadKeyFile reads one).
	material, key := spipe.GenerateKey()
	defer clear(material)

	var file bytes.Buffer
	w, err := sealed.NewWriter(&file, sealed.Key(key), nil)
	if err != nil {
		log.Fatal(err)
	}
	io.WriteString(w, "the plaintext, in chunks that each open on their own")
	if err := w.Close(); err != nil { // seals the final chunk
		log.Fatal(err)
	}

	// Random access: only the chunks that cover the range are opened.
	ra, err := sealed.NewReaderAt(bytes.NewReader(file.Bytes()), int64(file.Len()), sealed.Key(key), nil)
	if err != nil {
		log.Fatal(err)
	}
	word := make([]byte, 6)
	if _, err := ra.ReadAt(word, 30); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d bytes; at 30: %q\n", ra.Size(), word)
	// Output: 52 bytes; at 30: "each o"
}
