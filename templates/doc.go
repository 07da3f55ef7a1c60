// Package templates holds the Markdown templates of every document perfbot writes,
// embedded with go:embed. Templates are data: the logic that fills them lives with
// their callers.
package templates
