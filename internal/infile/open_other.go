//go:build !unix

package infile

const openFlags = 0
