package redis

import (
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/statetest"
)

func TestStateStoreConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T) crawlkit.StateStore { return openTestDB(t).StateStore() })
}
