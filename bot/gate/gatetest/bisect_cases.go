package gatetest

import (
	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
)

// BadShort is the short SHA the bisect cases name as bad=; BranchSHA is its commit.
const BadShort = "aa218f5"

// bisectCases are the cases of /bench rocm bisect: both ends resolved, the bad one on
// the default branch, the good one its ancestor, the range and the runs it needs
// within the config's limits, and the trust rules of /bench rocm.
func bisectCases() []Case {
	bothResolved := map[string]string{ShortSHA: FullOfShort, BadShort: BranchSHA}
	badOnMaster := []Containment{{Head: DefaultBranch, SHA: BranchSHA, Contained: true}}
	return []Case{
		{
			Name: "bisect on an issue resolves both short SHAs and pins the range", Payload: issueCreated,
			Edits: body("/bench rocm bisect good=9FCEB02 bad=" + BadShort),
			World: World{Config: Config, Permission: "write", Commits: bothResolved, Contains: badOnMaster,
				Ranges: []Range{{Base: FullOfShort, Head: BranchSHA, Status: "ahead", AheadBy: 11}}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Bisect, SHA: BranchSHA, Base: FullOfShort, Models: []string{"llama"}, Commits: 12},
		},
		{
			Name: "bisect on a pull request of a range at the commit limit with models=", Payload: prCreated,
			Edits: body("/bench rocm bisect good=" + FullOfShort + " bad=" + BranchSHA + " models=qwen3"),
			World: World{Config: Config, Permission: "write",
				Commits:  map[string]string{FullOfShort: FullOfShort, BranchSHA: BranchSHA},
				Contains: badOnMaster,
				Ranges:   []Range{{Base: FullOfShort, Head: BranchSHA, Status: "ahead", AheadBy: 63}}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Bisect, SHA: BranchSHA, Base: FullOfShort, Models: []string{"qwen3"}, Commits: 64},
		},
		{
			Name: "bisect by a commenter without write is refused before any commit is read", Payload: issueCreated,
			Edits: body("/bench rocm bisect good=9fceb02 bad=" + BadShort),
			World: World{Config: Config, Permission: "triage"},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonPermission, Reply: "running perfbot needs `write` or more"},
		},
		{
			Name: "bisect whose bad commit is not on the default branch is refused", Payload: prCreated,
			Edits: body("/bench rocm bisect good=9fceb02 bad=" + BadShort),
			World: World{Config: Config, Permission: "write", Commits: bothResolved,
				Contains: []Containment{{Head: DefaultBranch, SHA: BranchSHA}}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonBisect,
				Reply: "Commit `" + BranchSHA + "` (bad=) is not on the default branch `master`: a bisection is of the default branch's history."},
		},
		{
			Name: "bisect of a maintainer's full SHA off the default branch is refused too", Payload: issueCreated,
			Edits: body("/bench rocm bisect good=9fceb02 bad=" + ForkSHA),
			World: World{Config: Config, Permission: "admin",
				Commits:  map[string]string{ShortSHA: FullOfShort, ForkSHA: ForkSHA},
				Contains: []Containment{{Head: DefaultBranch, SHA: ForkSHA}}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonBisect, Reply: "(bad=) is not on the default branch `master`"},
		},
		{
			Name: "bisect whose good commit is newer than the bad one is refused, saying to swap them", Payload: issueCreated,
			Edits: body("/bench rocm bisect good=9fceb02 bad=" + BadShort),
			World: World{Config: Config, Permission: "write", Commits: bothResolved, Contains: badOnMaster,
				Ranges: []Range{{Base: FullOfShort, Head: BranchSHA, Status: "behind", BehindBy: 4}}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonBisect,
				Reply: "The good commit `" + FullOfShort + "` is newer than the bad one `" + BranchSHA + "` (4 commits after it): swap them"},
		},
		{
			Name: "bisect whose good commit is not an ancestor of the bad one is refused", Payload: issueCreated,
			Edits: body("/bench rocm bisect good=9fceb02 bad=" + BadShort),
			World: World{Config: Config, Permission: "write", Commits: bothResolved, Contains: badOnMaster,
				Ranges: []Range{{Base: FullOfShort, Head: BranchSHA, Status: "diverged", AheadBy: 3, BehindBy: 2}}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonBisect,
				Reply: "is not an ancestor of the bad one `" + BranchSHA + "`, so `9fceb02d..aa218f56` is not a range of the default branch's history"},
		},
		{
			Name: "bisect of a range one commit over limits.max_bisect_commits is refused", Payload: issueCreated,
			Edits: body("/bench rocm bisect good=9fceb02 bad=" + BadShort),
			World: World{Config: Config, Permission: "write", Commits: bothResolved, Contains: badOnMaster,
				Ranges: []Range{{Base: FullOfShort, Head: BranchSHA, Status: "ahead", AheadBy: 64}}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonBisect,
				Reply: "The range `9fceb02d..aa218f56` holds 65 commits (both ends, and merged commits, included); a bisection takes at most 64 (limits.max_bisect_commits of the config)"},
		},
		{
			Name: "bisect whose range needs more runs than limits.max_bisect_runs is refused with the estimate", Payload: issueCreated,
			Edits: body("/bench rocm bisect good=9fceb02 bad=" + BadShort),
			World: World{Config: Config + "limits: {max_bisect_runs: 25}\n", Permission: "write", Commits: bothResolved, Contains: badOnMaster,
				Ranges: []Range{{Base: FullOfShort, Head: BranchSHA, Status: "ahead", AheadBy: 40}}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonBisect,
				Reply: "The range `9fceb02d..aa218f56` of 41 commits needs at least 26 single-model runs to name its first bad commit (4 at each end, then 3 at each of 6 commits between), more than the 25 of limits.max_bisect_runs"},
		},
		{
			Name: "bisect whose range needs exactly limits.max_bisect_runs is accepted", Payload: issueCreated,
			Edits: body("/bench rocm bisect good=9fceb02 bad=" + BadShort),
			World: World{Config: Config + "limits: {max_bisect_runs: 26}\n", Permission: "write", Commits: bothResolved, Contains: badOnMaster,
				Ranges: []Range{{Base: FullOfShort, Head: BranchSHA, Status: "ahead", AheadBy: 40}}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Bisect, SHA: BranchSHA, Base: FullOfShort, Models: []string{"llama"}, Commits: 41},
		},
		{
			Name: "bisect naming a commit GitHub does not know is refused", Payload: issueCreated,
			Edits: body("/bench rocm bisect good=deadbee bad=" + BadShort),
			World: World{Config: Config, Permission: "write", Commits: map[string]string{"deadbee": ""}},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonRef, Reply: "has no commit `deadbee` (or the short SHA is ambiguous). Name a commit of the default branch `master` with `good=`"},
		},
		{
			Name: "bisect whose two SHAs resolve to one commit is refused", Payload: issueCreated,
			Edits: body("/bench rocm bisect good=9fceb02 bad=9fceb02d0ae5"),
			World: World{Config: Config, Permission: "write", Commits: map[string]string{ShortSHA: FullOfShort, "9fceb02d0ae5": FullOfShort}},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonBisect, Reply: "good= and bad= are the same commit, `" + FullOfShort + "`"},
		},
		{
			Name: "bisect of two models is refused by the parser", Payload: issueCreated,
			Edits: body("/bench rocm bisect good=9fceb02 bad=" + BadShort + " models=llama,qwen3"),
			World: World{Config: Config, Permission: "write"},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonBadCommand, Reply: "a bisection measures one model"},
		},
	}
}
