package bloom_test

import (
	"bytes"
	"fmt"

	"github.com/crawlkit/crawlkit/bloom"
)

func Example() {
	seen, err := bloom.New(bloom.Config{Expected: 1_000_000, FalsePositiveRate: 0.01})
	if err != nil {
		panic(err)
	}
	for _, u := range []string{
		"https://example.com/",
		"https://example.com/about",
		"https://example.com/", // a duplicate
	} {
		dup, _ := seen.TestAndAdd(u)
		fmt.Printf("%-26s seen before: %v\n", u, dup)
	}
	st := seen.Stats()
	fmt.Printf("%d shards, %d hash functions, %.1f bits per expected URL\n",
		st.Shards, st.StageHashes[0], float64(st.Bits)/float64(st.Expected))

	// Snapshot and restore, as across a restart.
	var snap bytes.Buffer
	if _, err := seen.WriteTo(&snap); err != nil {
		panic(err)
	}
	restored, err := bloom.Load(&snap, bloom.Config{})
	if err != nil {
		panic(err)
	}
	dup, _ := restored.Contains("https://example.com/about")
	fmt.Println("after restore, /about seen:", dup)
	// Output:
	// https://example.com/       seen before: false
	// https://example.com/about  seen before: false
	// https://example.com/       seen before: true
	// 8 shards, 7 hash functions, 9.9 bits per expected URL
	// after restore, /about seen: true
}
