package action

import (
	"strconv"
	"strings"
	"testing"
)

// Each bounded input at its last valid value and its first refused one: an input of
// 4096 bytes, 32 models or sampling settings, issue number 2^31-1 (epic, issue) and a
// results path with a space are read; one byte, one item or one number more, or a
// control character, is refused.
func TestReadInputsAtTheirEdges(t *testing.T) {
	t.Parallel()
	list := func(n int, item func(int) string) string {
		var l []string
		for i := range n {
			l = append(l, item(i))
		}
		return strings.Join(l, ",")
	}
	model := func(i int) string { return "m" + strconv.Itoa(i) }
	temp := func(i int) string { return "t0." + strconv.Itoa(i+10) }
	for _, c := range []struct {
		name     string
		ok, over map[string]string
		want     string
	}{
		{"bytes", map[string]string{"job": "profile", "github-token": strings.Repeat("x", 4096)},
			map[string]string{"job": "profile", "github-token": strings.Repeat("x", 4097)}, "input github-token: 4097 bytes, more than the 4096"},
		{"models", map[string]string{"job": "profile", "models": list(32, model)},
			map[string]string{"job": "profile", "models": list(33, model)}, "input models: 33 names, more than 32"},
		{"sampling", map[string]string{"job": "profile", "sampling": list(32, temp)},
			map[string]string{"job": "profile", "sampling": list(33, temp)}, "input sampling: 33 settings, more than 32"},
		{"epic", map[string]string{"job": "publish", "epic": "2147483647"},
			map[string]string{"job": "publish", "epic": "2147483648"}, "input epic: 2147483648 is not an issue number"},
		{"issue", map[string]string{"job": "publish", "issue": "2147483647"},
			map[string]string{"job": "publish", "issue": "2147483648"}, "input issue: 2147483648 is not an issue number"},
		// A space is the first character a results path may hold; the one below it is
		// a control character.
		{"results", map[string]string{"job": "publish", "results": "/tmp/the results", "ref": strings.Repeat("a", 40)},
			map[string]string{"job": "publish", "results": "/tmp/the\x1fresults", "ref": strings.Repeat("a", 40)}, "input results: the folder's path holds a control character"},
	} {
		if _, err := readInputs(newStepEnv(t, c.ok).runtime(t)); err != nil {
			t.Errorf("%s at the edge: %v", c.name, err)
		}
		if _, err := readInputs(newStepEnv(t, c.over).runtime(t)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s past the edge: %v, want %q", c.name, err, c.want)
		}
	}
}
