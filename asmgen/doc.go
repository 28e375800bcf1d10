// Package asmgen holds the avo generators of spipe's assembly kernels. It is
// a module of its own so that users of the library never download avo; the
// generated .s and stub files are committed in the packages that use them.
package asmgen
