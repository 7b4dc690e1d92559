package kitrun_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/internal/kitrun"
)

// The inner tests are named after this test, so that a -run pattern that
// selects it selects them too.
func TestRun(t *testing.T) {
	if !kitrun.Run("TestRun", func(t *testing.T) { t.Run("sub", func(t *testing.T) {}) }) {
		t.Error("a passing test reported as failing")
	}
	if kitrun.Run("TestRun", func(t *testing.T) { t.Skip("skipped") }) != true {
		t.Error("a skipped test reported as failing")
	}
}
