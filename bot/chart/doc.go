// Package chart draws the SVG charts perfbot publishes: decode tok/s over the nights
// with the noise band (the trend page's inline charts and the baseline page's file),
// and the GPU time per token of each run split by port unit (the report page's file).
// It owns the scales (the y range rule and the 1-2-5 ticks), the geometry of a line
// chart, and the writing of a self-contained SVG document.
//
// A written SVG loads nothing and runs nothing (no script, no external reference, no
// font), escapes every label (model and run names are untrusted), keeps its labels
// inside its viewBox by measuring text conservatively, and is deterministic: the same
// input gives the same bytes, so the files can be golden-tested and committed.
//
// It must not read files, decide verdicts or compute figures of its own beyond the
// scales: values and bands arrive from runner/baseline and runner/rank.
package chart
