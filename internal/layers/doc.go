// Package layers holds no code: its test checks the layering of perfbot's packages
// with one `go list` of the module (no network), and fails naming the rule and the
// chain of imports that breaks it.
//
// The layers, bottom up:
//
//   - internal/... helpers (text, files, fakes of GitHub and of the host, test
//     fixtures) import nothing of perfbot above them: not bot/..., runner/...,
//     cmd/... or action. Two sit higher on purpose: internal/synthtest builds an
//     analyzed synthetic run with the runner (so it may import runner/..., never
//     bot/...), and internal/demo wires the whole flow (the real server, the action,
//     fakes) for `perfbot demo`. A fake of GitHub does not import the bot it stands
//     in for, so a test cannot pass by sharing the bot's mistakes.
//   - the format packages (runner/results, runner/benchcsv, runner/benchlog, config)
//     read and write files; they never import the packages that run jobs
//     (runner/job, runner/guard, runner/proc, runner/sandbox).
//   - runner/... is the job on the GPU host and never imports bot/....
//   - bot/... is the server and the publishing side; bot/report renders text and
//     does not run jobs. bot/publish and bot/intake read results and do not run
//     jobs either, nor start processes: they use runner/patch (the patch as data and
//     text), never runner/proc, runner/sandbox or runner/patch/patchrun (which runs
//     the target repo's checker and verification).
//   - cmd/perfbot is the top: nothing imports cmd/... or internal/demo but it.
//
// A rule covers the code that is built; test files count only where a rule says so
// (the runner's tests never need the bot, and no test uses cmd/... or the demo). The
// rules not yet true are listed apart in the test (pending) until the code meets them.
package layers
