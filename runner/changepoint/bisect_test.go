package changepoint

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// streamMeasure measures commits with a step of step (a fraction) at culprit: every
// commit has its own stream of readings (seeded by seed and its index), so two
// bisections of the same seed see the same k-th reading of a commit. The noise is
// normal of sigma; with heavy, Student's t with 3 degrees of freedom at the same
// interquartile range, and one run in ten is an odd one, 8 to 20 % slow (another
// tenant woke up).
func streamMeasure(commits []string, culprit int, step, sigma float64, heavy bool, seed uint64) Measure {
	streams := map[int]*rand.Rand{}
	return func(_ context.Context, c string, n int) ([]float64, error) {
		i := slices.Index(commits, c)
		if streams[i] == nil {
			streams[i] = rand.New(rand.NewPCG(seed, uint64(i)))
		}
		r := streams[i]
		l := 100.0
		if i >= culprit {
			l = 100 * (1 - step)
		}
		out := make([]float64, n)
		for j := range out {
			e := r.NormFloat64()
			if heavy {
				chi := 0.0
				for range 3 {
					g := r.NormFloat64()
					chi += g * g
				}
				e *= 1.349 / (2 * 0.7648923) / math.Sqrt(chi/3)
			}
			out[j] = l * math.Exp(sigma*e)
			if heavy && r.IntN(10) == 0 {
				out[j] *= 1 - 0.08 - 0.12*r.Float64()
			}
		}
		return out, nil
	}
}

// On heavy-tailed noise with odd slow runs the robust likelihood names the culprit
// more often than the normal one on the same readings; on normal noise it does as well
// as the normal one.
func TestBisectRobustLikelihood(t *testing.T) {
	t.Parallel()
	commits := make([]string, 32)
	for i := range commits {
		commits[i] = fmt.Sprintf("c%02d", i)
	}
	const runs = 50
	for _, heavy := range []bool{true, false} {
		right := map[string]int{}
		for k := range runs {
			culprit := 1 + (k*13)%31
			for _, lik := range []string{LikelihoodRobust, LikelihoodNormal} {
				p := DefaultBisectParams()
				p.Likelihood = lik
				r, err := Bisect(context.Background(), commits, streamMeasure(commits, culprit, 0.05, 0.02, heavy, uint64(k)), p)
				if err != nil {
					t.Fatal(err)
				}
				if r.Runs > p.Budget {
					t.Fatalf("%d runs, budget %d", r.Runs, p.Budget)
				}
				if r.FirstBad == commits[culprit] {
					right[lik]++
				}
			}
		}
		rob, nor := right[LikelihoodRobust], right[LikelihoodNormal]
		t.Logf("heavy-tailed %v: robust right %d, normal right %d of %d", heavy, rob, nor, runs)
		if heavy && (rob < nor+runs/10 || rob < runs*9/10) {
			t.Errorf("heavy-tailed noise: robust right %d, normal %d of %d", rob, nor, runs)
		}
		if !heavy && (rob < nor-2 || rob < runs*9/10) {
			t.Errorf("normal noise: robust right %d, normal %d of %d", rob, nor, runs)
		}
	}
}

// The likelihood is checked; empty is the robust one; the same readings give the same
// result.
func TestBisectLikelihoodParam(t *testing.T) {
	t.Parallel()
	commits := make([]string, 20)
	for i := range commits {
		commits[i] = fmt.Sprintf("c%02d", i)
	}
	p := DefaultBisectParams()
	p.Likelihood = "cauchy"
	if _, err := Bisect(context.Background(), commits, streamMeasure(commits, 7, 0.05, 0.03, true, 1), p); err == nil {
		t.Error("an unknown likelihood: no error")
	}
	var got []BisectResult
	for _, lik := range []string{"", LikelihoodRobust, LikelihoodRobust} {
		p.Likelihood = lik
		r, err := Bisect(context.Background(), commits, streamMeasure(commits, 7, 0.05, 0.03, true, 1), p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if !reflect.DeepEqual(got[0], got[1]) || !reflect.DeepEqual(got[1], got[2]) {
		t.Errorf("the same readings, different results:\n%+v\n%+v\n%+v", got[0], got[1], got[2])
	}
	if got[0].FirstBad != "c07" || len(got[0].Steps) < 3 {
		t.Errorf("result %+v", got[0])
	}
}

// The posterior is a distribution over 1 .. n-1 whatever the runs: with only the ends
// measured every commit between is as likely; with readings that do not vary (a fake
// host) the noise floor keeps it finite and the step is plain.
func TestBisectPosteriorEdges(t *testing.T) {
	t.Parallel()
	for _, lik := range []string{LikelihoodRobust, LikelihoodNormal} {
		p := DefaultBisectParams()
		p.Likelihood = lik
		b := &bisector{p: p, commits: make([]string, 9), runs: map[int][]float64{}}
		b.runs[0] = logs([]float64{100, 101, 99, 100})
		b.runs[8] = logs([]float64{90, 91, 89, 90})
		post := b.posterior()
		for c, v := range post {
			if want := map[bool]float64{true: 0, false: 1.0 / 8}[c == 0]; math.Abs(v-want) > 1e-12 {
				t.Errorf("%s, ends only: post[%d] = %v, want %v", lik, c, v, want)
			}
		}
		b.runs[0] = logs([]float64{100, 100, 100})
		b.runs[8] = logs([]float64{93, 93, 93})
		b.runs[3] = logs([]float64{100, 100, 100})
		b.runs[4] = logs([]float64{93, 93, 93})
		post = b.posterior()
		sum := 0.0
		for _, v := range post {
			if math.IsNaN(v) || v < 0 {
				t.Fatalf("%s: posterior %v", lik, post)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 || post[4] < 0.999 {
			t.Errorf("%s, readings that do not vary: posterior %v", lik, post)
		}
	}
}

// benchBisector is a bisection of commits commits after runs runs: the ends 8 each, the
// rest 3 to 9 at commits spread over the range, a 5 % step at 3 % noise.
func benchBisector(commits, runs int) *bisector {
	rng := rand.New(rand.NewPCG(1, 1))
	p := DefaultBisectParams()
	b := &bisector{p: p, commits: make([]string, commits), runs: map[int][]float64{}}
	culprit := commits / 3
	add := func(k, n int) {
		l := 100.0
		if k >= culprit {
			l = 95
		}
		for range n {
			b.runs[k] = append(b.runs[k], math.Log(l*(1+0.03*rng.NormFloat64())))
		}
	}
	add(0, 8)
	add(commits-1, 8)
	for done, k := 16, 1; done < runs; k = (k*7 + 3) % (commits - 1) {
		n := min(3+k%7, runs-done)
		add(max(1, k), n)
		done += n
	}
	return b
}

// The cost of one step of a bisection: the posterior of every commit from every run so
// far, over 32 commits after 60 runs (a typical bisection's last step) and over 1024
// commits after 300 (the largest range).
func BenchmarkBisectPosterior(b *testing.B) {
	for _, c := range []struct{ commits, runs int }{{32, 60}, {1024, 300}} {
		for _, lik := range []string{LikelihoodRobust, LikelihoodNormal} {
			bs := benchBisector(c.commits, c.runs)
			bs.p.Likelihood = lik
			b.Run(fmt.Sprintf("%s/%d-commits/%d-runs", lik, c.commits, c.runs), func(b *testing.B) {
				for b.Loop() {
					bs.posterior()
				}
			})
		}
	}
}
