package intake

import (
	"errors"
	"fmt"

	"github.com/lablup/perfbot/internal/safetext"
)

// The rules a results artifact can break. Every refusal is an *Error whose Rule is one
// of these, so a caller (and a test) can tell them apart with errors.Is.
var (
	ErrExists     = errors.New("the destination exists already: give a new folder to copy into")
	ErrLayout     = errors.New("not the layout of a results folder")
	ErrName       = errors.New("not a name a results file can have (one printable path element: no /, \\, .., NUL, control character or leading dot)")
	ErrUnknown    = errors.New("not a file of the results folder's layout")
	ErrLink       = errors.New("a symbolic link: the artifact must hold regular files only")
	ErrNotRegular = errors.New("not a regular file (a FIFO, socket or device)")
	ErrNested     = errors.New("a folder inside the results folder, which holds files only")
	ErrDepth      = errors.New("deeper than the folder levels allowed (Limits.MaxDepth)")
	ErrTooMany    = errors.New("more entries than the artifact may hold (Limits.MaxFiles)")
	ErrTooLarge   = errors.New("larger than one file may be (Limits.MaxFileBytes)")
	ErrTotal      = errors.New("over the total size the artifact may have (Limits.MaxTotalBytes)")
	ErrFormat     = errors.New("refused by perfbot's reader for its kind")
)

// Error is one refusal: the file (or folder) and the rule it broke.
type Error struct {
	// File is the entry's path relative to the source folder, slash-separated; for the
	// source itself it is the source path as given.
	File string
	Rule error // one of the Err* values
	Err  error // what exactly: the reader's error, the size; nil when the rule says all
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("results artifact: %s: %v", safetext.Quote(e.File), e.Rule)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap gives the rule and the detail, for errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Rule}
	}
	return []error{e.Rule, e.Err}
}

func refuse(file string, rule error, format string, a ...any) *Error {
	e := &Error{File: file, Rule: rule}
	if format != "" {
		e.Err = fmt.Errorf(format, a...)
	}
	return e
}

func refuseErr(file string, rule error, err error) *Error {
	return &Error{File: file, Rule: rule, Err: err}
}
