// Package docs holds perfbot's documentation pages (the Markdown files beside this one).
// It has no code: its test keeps the pages and the repository in step. Every
// `docs/<page>.md §N` citation in the code and the docs must name a numbered section that
// exists, every relative link in README.md and docs/*.md must name a file of the
// repository, every page must be listed in README.md, and nothing may point at notes that
// live outside the repository. Nothing imports this package.
package docs
