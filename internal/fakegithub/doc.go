// Package fakegithub is perfbot's one GitHub for tests and for `perfbot demo`: a real
// HTTP server on 127.0.0.1, mounted under a base path (/api/v3/ by default, as on
// GitHub Enterprise Server) so that a client building absolute URLs fails loudly.
//
// A call is answered by the first of:
//
//   - an expectation a test declared with Expect and a Responder (a fixture, a named
//     example of GitHub's REST description, a recorded real answer such as the
//     secondary rate-limit 403, a status, a sequence of faults then a success ...);
//     expectations are tried in the order declared, and at the end of the test every
//     one must have been used as many times as declared;
//   - with the App option, a small stateful GitHub: one App whose JWTs verify with its
//     key, installation and user tokens, repositories whose branches live in real bare
//     git repositories, issues, pull requests, comments, reactions, check runs,
//     collaborator permissions, workflow dispatches and runs. Its routes are ServeMux
//     patterns ("GET /repos/{owner}/{repo}/pulls/{pull_number}", see routes); an
//     endpoint it does not serve answers GitHub's 404 with a message naming it;
//   - otherwise the call is unexpected: it fails the test and answers 501.
//
// Every request is recorded (Requests). In a test, every 2xx JSON answer, from an
// expectation or from the App's world, is checked in one place (reply) against the
// operation's response schema in GitHub's REST description, kept with its source in
// testdata/real/github/openapi, so neither can drift from the documented shapes.
//
// New starts a fake for a test and stops it at the test's end; Start serves one for the
// demo, where nothing is checked. The package does not import testing. It must never be
// exposed beyond the loopback interface, and it must never write to the real data under
// testdata/real.
package fakegithub
