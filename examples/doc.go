// Package examples holds the files a deployment copies: the GitHub App manifest
// (github-app/manifest.json) and the systemd unit of `perfbot serve`
// (systemd/perfbot-serve.service), both explained in docs/install.md. It has no code:
// its test keeps the files to what perfbot needs and docs/install.md to the files.
// Nothing imports this package.
package examples
