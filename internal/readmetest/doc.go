// Package readmetest holds the test that compiles the Go examples in the
// module's README.md, so that a renamed or changed API cannot leave the
// README behind. It has no code of its own: the test vets each example as
// a file of this package (see readme_test.go).
package readmetest
