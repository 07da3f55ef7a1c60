package rocprof

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
)

// bom is the UTF-8 byte order mark some editors and converters put before the header.
var bom = []byte{0xEF, 0xBB, 0xBF}

// errUnterminated is returned by nextCell for a quoted cell with no closing quote.
var errUnterminated = errors.New("unterminated quoted cell")

// errLineTooLong is returned by the chunker for a line longer than maxLineBytes; the
// reader turns it into a ParseError at the line's number.
var errLineTooLong = errors.New("line too long")

// lineTooLong is the message for errLineTooLong.
var lineTooLong = fmt.Sprintf("a line longer than %d KiB, far more than any profiler row: is this a rocprofv3 CSV file (and not a binary or a corrupted one)?", maxLineBytes>>10)

// nextCell returns the cell of line starting at p and the position just past its comma.
// A returned position of len(line)+1 means the cell was the last one of the line.
//
// rocprofv3 quotes strings without doubling an embedded '"', so a quoted cell ends at
// the first '"' that is followed by ',' or by the end of the line (a lazy quote).
func nextCell(line []byte, p int) (cell []byte, next int, err error) {
	n := len(line)
	if p < n && line[p] == '"' {
		q := p + 1
		for {
			i := bytes.IndexByte(line[q:], '"')
			if i < 0 {
				return nil, n + 1, errUnterminated
			}
			q += i
			if q+1 == n || line[q+1] == ',' {
				return line[p+1 : q], q + 2, nil
			}
			q++
		}
	}
	// Unquoted cells are numbers of a few bytes: a plain loop beats IndexByte's setup.
	start := p
	for p < n && line[p] != ',' {
		p++
	}
	return line[start:p], p + 1, nil
}

// splitCells splits one line into its cells (copied to strings).
func splitCells(line []byte) ([]string, error) {
	var cells []string
	for p := 0; p <= len(line); {
		c, next, err := nextCell(line, p)
		if err != nil {
			return nil, err
		}
		cells = append(cells, string(c))
		p = next
	}
	return cells, nil
}

// countCells counts the cells of line without copying them; an unterminated quoted
// cell counts as one, and the error says it was there.
func countCells(line []byte) (int, error) {
	got := 0
	for p := 0; p <= len(line); got++ {
		_, next, err := nextCell(line, p)
		if err != nil {
			return got + 1, err
		}
		p = next
	}
	return got, nil
}

// trimLine drops a trailing '\r' (CRLF files).
func trimLine(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// parseInt parses a decimal integer with an optional sign, without allocating.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		b = b[1:]
	}
	// 19 digits always fit a uint64; anything longer is out of range or zero-padded,
	// which the profiler never writes.
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// chunker cuts a stream into chunks of whole lines, reusing the caller's buffers.
type chunker struct {
	r     io.Reader
	carry []byte // the partial last line of the previous chunk
	eof   bool
}

// fill reads the next chunk into buf (growing it when one line does not fit) and
// returns the chunk, which ends with '\n' unless it is the last one, and the buffer to
// keep for reuse. An empty chunk with eof set means the stream is done.
func (c *chunker) fill(buf []byte) (data, kept []byte, err error) {
	if c.eof {
		return nil, buf, nil
	}
	if cap(buf) <= len(c.carry) {
		buf = make([]byte, 2*len(c.carry)+1)
	}
	buf = buf[:cap(buf)]
	n := copy(buf, c.carry)
	c.carry = c.carry[:0]
	for {
		m, err := io.ReadFull(c.r, buf[n:])
		n += m
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			c.eof = true
			return buf[:n], buf, nil
		case err != nil:
			return nil, buf, fmt.Errorf("reading: %w", err)
		}
		if cut := bytes.LastIndexByte(buf[:n], '\n'); cut >= 0 {
			c.carry = append(c.carry, buf[cut+1:n]...)
			return buf[:cut+1], buf, nil
		}
		// One line is longer than the buffer: grow it and read on, up to the bound.
		if n > maxLineBytes {
			return nil, buf, errLineTooLong
		}
		bigger := make([]byte, 2*len(buf))
		copy(bigger, buf[:n])
		buf = bigger
	}
}
