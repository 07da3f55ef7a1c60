// Package intake owns the artifact boundary between the GPU job and the publish job.
// The GPU job builds and runs code of the pinned commit and holds no secret; the
// publish job holds the GitHub App's key and receives the GPU job's results folder as
// a workflow artifact. intake copies that folder, checking it on the way, and the
// publisher reads only the copy: a profile's <gfx>_<commit> folder (Profile), a
// nightly's benchmarks folder (Nightly, with the folders its manifest names: a suspect's
// confirming A/B and a bisection), an A/B compare's <gfx>_<A8>_<B8> folder with its
// side folders a/ and b/ (Compare) or a bisection folder with its culprit's profile
// A/B (Bisect).
//
// Every entry is opened without following links (openat with O_NOFOLLOW on Linux) and
// read within size caps, and must be a regular file with a name of the folder's layout
// (docs/formats.md §3, docs/nightly.md: runner/results owns the names, intake maps each
// to a reader); every file is parsed by perfbot's own reader for its kind
// (runner/results' for the manifests, the analysis files and the guard's evidence),
// from the copy. A symbolic link, a FIFO, a device, a sub-folder, a name
// with a path or control character in it, an unknown name, a file over a cap, or a file
// its reader refuses is an *Error naming the file and the rule, and nothing is left at
// the destination. The profiler traces, which the publisher has always left out of its
// commit, are left out here too (Result.Dropped), and a failed run's crash log is kept
// with a note (Result.Notes) though its reader refuses it. docs/intake.md has the
// rules and the limits.
//
// It must not validate in place (what was checked is what is read: the copy), follow a
// link, decide what gets committed beyond the layout, talk to GitHub, or run anything.
package intake
