package gatetest

import (
	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
)

// compareCases are the cases of /bench rocm compare and /profile rocm compare: A and
// B pinned on a pull request (the merge base with the target branch, or base=) and on
// an issue (both named), with the rules of ref= on both sides.
func compareCases() []Case {
	return []Case{
		{
			Name: "compare on a pull request pins A to the merge base with its target branch and B to its head", Payload: prCreated,
			Edits: body("/bench rocm compare"),
			World: World{Config: Config, Permission: "write", PR: &PR{SHA: PRSHA},
				MergeBases: []MergeBase{{Base: DefaultBranch, Head: PRSHA, SHA: MasterSHA}}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Bench, SHA: PRSHA, Models: defaultModels,
				Compare: true, Base: MasterSHA, Repeats: 10},
		},
		{
			Name: "compare on a pull request with base= takes the named branch as A", Payload: prCreated,
			Edits: body("/profile rocm compare base=release models=qwen3"),
			World: World{Config: Config, Permission: "write", PR: &PR{SHA: PRSHA},
				Branches: map[string]string{"release": BranchSHA}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Profile, SHA: PRSHA, Models: []string{"qwen3"}, Sampling: defaultSampling,
				Compare: true, Base: BranchSHA, Repeats: 10},
		},
		{
			Name: "compare on an issue pins both named commits", Payload: issueCreated,
			Edits: body("/bench rocm compare base=9FCEB02 ref=topic repeats=5"),
			World: World{Config: Config, Permission: "write", Branches: map[string]string{"topic": BranchSHA},
				Commits:  map[string]string{ShortSHA: FullOfShort},
				Contains: []Containment{{Head: DefaultBranch, SHA: FullOfShort, Contained: true}}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Bench, SHA: BranchSHA, Models: defaultModels,
				Compare: true, Base: FullOfShort, Repeats: 5},
		},
		{
			Name: "compare on an issue without base= is refused before anything is pinned", Payload: issueCreated,
			Edits: body("/bench rocm compare ref=topic"),
			World: World{Config: Config, Permission: "write"},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonCompare,
				Reply: "A compare on an issue names both commits: `base=` for A"},
		},
		{
			Name: "compare on an issue without ref= is refused", Payload: issueCreated,
			Edits: body("/profile rocm compare base=main"),
			World: World{Config: Config, Permission: "write"},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonCompare, Reply: "`/profile rocm compare base=main ref=my-branch`"},
		},
		{
			Name: "compare of a fork's pull request is refused with the command a maintainer would post", Payload: prCreated,
			Edits: body("/bench rocm compare"),
			World: World{Config: Config, Permission: "admin", PR: &PR{SHA: ForkSHA, Fork: true}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonFork,
				Reply: "`/bench rocm compare ref=" + ForkSHA + "`"},
		},
		{
			Name: "compare with a short base SHA on neither branch is refused", Payload: prCreated,
			Edits: body("/bench rocm compare base=9fceb02"),
			World: World{Config: Config, Permission: "write", PR: &PR{SHA: PRSHA},
				Commits:  map[string]string{ShortSHA: FullOfShort},
				Contains: []Containment{{Head: DefaultBranch, SHA: FullOfShort}, {Head: PRSHA, SHA: FullOfShort}}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonRef,
				Reply: "Commit `" + FullOfShort + "` is not on the default branch `master` or this pull request's own branch: it may come from a fork. Name a branch with `base=BRANCH`"},
		},
		{
			Name: "compare with a full base SHA named by a maintainer is taken as it is", Payload: issueCreated,
			Edits: body("/bench rocm compare base=" + ForkSHA + " ref=topic"),
			World: World{Config: Config, Permission: "maintain", Branches: map[string]string{"topic": BranchSHA},
				Commits: map[string]string{ForkSHA: ForkSHA}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Bench, SHA: BranchSHA, Models: defaultModels,
				Compare: true, Base: ForkSHA, Repeats: 10},
		},
		{
			Name: "compare with a full base SHA named by a writer must be on a branch", Payload: issueCreated,
			Edits: body("/bench rocm compare base=" + ForkSHA + " ref=topic"),
			World: World{Config: Config, Permission: "write", Branches: map[string]string{"topic": BranchSHA},
				Commits:  map[string]string{ForkSHA: ForkSHA},
				Contains: []Containment{{Head: DefaultBranch, SHA: ForkSHA}}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonRef, Reply: "is not on the default branch `master`: it may come from a fork. Name a branch with `base=BRANCH`"},
		},
		{
			Name: "compare of a pull request already merged into its target is refused", Payload: prCreated,
			Edits: body("/bench rocm compare"),
			World: World{Config: Config, Permission: "write", PR: &PR{SHA: PRSHA},
				MergeBases: []MergeBase{{Base: DefaultBranch, Head: PRSHA, SHA: PRSHA}}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonCompare, Reply: "A and B are the same commit, `" + PRSHA + "`"},
		},
		{
			Name: "compare whose merge base GitHub does not find is refused", Payload: prCreated,
			Edits: body("/bench rocm compare"),
			World: World{Config: Config, Permission: "write", PR: &PR{SHA: PRSHA},
				MergeBases: []MergeBase{{Base: DefaultBranch, Head: PRSHA}}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonRef, Reply: "perfbot found no merge base of `" + PRSHA + "` with the target branch `master`"},
		},
		{
			Name: "compare with repeats out of range is refused with the range", Payload: prCreated,
			Edits: body("/bench rocm compare repeats=3"),
			World: World{Config: Config, Permission: "write"},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonBadCommand,
				Reply: "repeats=3 is out of range: a compare runs 5 to 10 repeats per side"},
		},
	}
}
