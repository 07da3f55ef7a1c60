package baseline

import "fmt"

// Describe says in one sentence what a model's noise band is under the rules, with the
// estimator's own constants, as the published pages print it; a page that shows a
// verdict says by which rule it was reached.
func (r Rules) Describe() string {
	return fmt.Sprintf("A model's noise band is the median of its last %d comparable nightly runs ± %g robust standard deviations (the larger of %g x MAD and IQR / %g), at least ± %g%%; with fewer than %d runs there is no band.",
		r.Window, r.K, madScale, iqrScale, r.MinChangePct, r.MinHistory)
}
