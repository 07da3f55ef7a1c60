// Package examples holds the files a deployment copies: the GitHub App manifest
// (github-app/manifest.json), the systemd unit of `perfbot serve`
// (systemd/perfbot-serve.service) and the workflows (workflows/: the profile the server
// dispatches, the serverless comment workflow, the nightly), all explained in
// docs/install.md. It has no code: its tests keep the files to what perfbot needs (the
// workflows: one comment starts one run, the gate's if: loses no command, no secret in
// a job that runs the repository's code, perfbot pinned to a release) and
// docs/install.md to the files. Nothing imports this package.
package examples
