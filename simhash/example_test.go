package simhash_test

import (
	"fmt"
	"strings"

	"github.com/crawlkit/crawlkit/simhash"
)

func Example() {
	// An article of about 400 words, and a copy of it with another date.
	var article strings.Builder
	for i := range 40 {
		fmt.Fprintf(&article, "Crawler %s fetches page %s of the site, extracts its links and waits politely. ",
			[]string{"one", "two", "three", "four", "five"}[i%5], []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}[i%8])
	}
	body := article.String()
	original := simhash.FingerprintPage("How crawlers work", "Published on 2026-03-02. "+body)
	republished := simhash.FingerprintPage("How crawlers work", "Published on 2026-03-09. "+body)
	other := simhash.FingerprintPage("Bread", "A recipe: knead the dough for ten minutes, then let it rise overnight.")

	fmt.Println("edited copy within 3 bits:", simhash.Distance(original, republished) <= 3)
	fmt.Println("unrelated text over 20 bits away:", simhash.Distance(original, other) > 20)

	ix, err := simhash.NewIndex(simhash.Config{K: 3})
	if err != nil {
		panic(err)
	}
	ix.Add(original, 1)
	ix.Add(other, 2)
	for _, m := range ix.Near(republished) {
		fmt.Printf("near-duplicate of document %d\n", m.ID)
	}
	// Output:
	// edited copy within 3 bits: true
	// unrelated text over 20 bits away: true
	// near-duplicate of document 1
}

// An Index whose tables live in a TableStore instead of memory: with
// storage/pebble's FingerprintTables they are on disk and the process's
// memory does not grow with the fingerprints. MemoryTables stands in for
// it here. Reopening on the same store finds the entries again.
func ExampleIndex_tables() {
	tables := &simhash.MemoryTables{}
	ix, err := simhash.NewIndex(simhash.Config{K: 3, Tables: tables})
	if err != nil {
		panic(err)
	}
	if err := ix.AddBatch([]simhash.Entry{
		{Fingerprint: 0xfeedfacecafebeef, ID: 1},
		{Fingerprint: 0x0123456789abcdef, ID: 2},
	}); err != nil {
		panic(err)
	}

	reopened, err := simhash.NewIndex(simhash.Config{K: 3, Tables: tables})
	if err != nil {
		panic(err)
	}
	matches, err := reopened.AppendNearErr(nil, 0xfeedfacecafebeef^0b101)
	if err != nil {
		panic(err)
	}
	for _, m := range matches {
		fmt.Printf("document %d at distance %d\n", m.ID, m.Distance)
	}
	st := reopened.Stats()
	fmt.Println("entries:", reopened.Len(), "tables:", st.Tables, "bytes in memory:", st.Bytes)
	// Output:
	// document 1 at distance 2
	// entries: 2 tables: 6 bytes in memory: 0
}
