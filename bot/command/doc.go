// Package command owns the grammar of perfbot's comment commands (`/profile rocm
// models=a,b`, `/bench rocm`, their compare forms `/bench rocm compare base=A ref=B`,
// the bisection `/bench rocm bisect good=SHA bad=SHA`, `/perfbot help|status|cancel
// [id]`): finding the one command in a comment body
// (anchored at the start of a line, outside quotes, code blocks, HTML comments and HTML
// elements shown as code or quotes), turning its words into typed values checked
// against the repository's config, and the help and error replies, all generated from
// one table (docs/commands.md).
//
// It is shared by the bot server and the Action's gate job. It must not talk to GitHub,
// decide who may run what, or let comment text reach a shell or a path: its output is
// typed values only, and every input it reads is bounded.
package command
