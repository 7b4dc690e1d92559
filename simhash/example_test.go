package simhash_test

import (
	"fmt"
	"strings"

	"github.com/crawlkit/crawlkit/simhash"
)

func Example() {
	body := strings.Repeat("Crawlers fetch pages, extract links and follow them politely. ", 20)
	original := simhash.Fingerprint(body + "Published on Monday.")
	republished := simhash.Fingerprint(body + "Published on Tuesday.")
	other := simhash.Fingerprint("A recipe: knead the dough for ten minutes, then let it rise overnight.")

	fmt.Println("edited copy within 3 bits:", simhash.Distance(original, republished) <= 3)
	fmt.Println("unrelated text over 20 bits away:", simhash.Distance(original, other) > 20)

	ix, err := simhash.NewIndex(simhash.Options{K: 3})
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
