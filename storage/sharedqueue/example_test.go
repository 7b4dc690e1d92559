package sharedqueue_test

import (
	"fmt"

	"github.com/crawlkit/crawlkit/storage/sharedqueue"
)

// A zero Config is a polite queue; WithDefaults shows what it will do.
func ExampleConfig_WithDefaults() {
	c, err := sharedqueue.Config{MaxAttempts: 3}.WithDefaults()
	if err != nil {
		panic(err)
	}
	fmt.Println(c.LeaseTTL, c.MaxAttempts, c.Bands, c.PollInterval)

	_, err = sharedqueue.Config{Bands: 40}.WithDefaults()
	fmt.Println(err)
	// Output:
	// 5m0s 3 4 200ms
	// sharedqueue: invalid config: Bands 40 outside 1..16
}
