// Package streamtest holds the inputs that never end, for tests of readers that must
// stop on their own: an endless stream of NULs (what /dev/zero or a sparse file gives),
// an endless repetition of a text, a reader that counts what was taken from it, and a
// FIFO with no writer. It is for tests only and must not be imported by production code.
package streamtest

import "io"

// Zeros is an endless stream of NUL bytes.
type Zeros struct{}

func (Zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Repeat is an endless repetition of Text.
type Repeat struct {
	Text string
	off  int
}

func (r *Repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.Text[r.off:])
		n += c
		r.off = (r.off + c) % len(r.Text)
	}
	return n, nil
}

// Counting counts the bytes read through it.
type Counting struct {
	R io.Reader
	N int64
}

func (c *Counting) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}
