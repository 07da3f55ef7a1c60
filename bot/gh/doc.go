// Package gh is perfbot's only door to the GitHub REST API: authentication (a static
// token, or a GitHub App and its per-installation tokens), retries, rate limits and a
// deadline on every attempt in one http.RoundTripper under go-github, typed errors, and the idempotent writes the bot
// needs (upsert a pull request, upsert a comment found by a hidden marker, complete a
// check run, react, look up a permission).
//
// Every write reports whether it created, updated or left the thing unchanged, and none
// of them posts twice when GitHub fails half-way. go-github's pointer structs stay inside
// this package; callers see plain values.
//
// It must not decide policy (who may trigger a run, what a comment says, which branch a
// bot PR uses): callers pass those in. It must never log or return credentials.
package gh
