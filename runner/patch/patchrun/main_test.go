package patchrun

import (
	"testing"

	"github.com/lablup/perfbot/internal/gittest"
)

// TestMain runs git without the machine's user or system config, as on a fresh runner.
func TestMain(m *testing.M) { gittest.Main(m) }
