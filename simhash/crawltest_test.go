package simhash

import (
	"testing"

	"github.com/crawlkit/crawlkit/crawltest"
)

// TestNearDuplicateClustersOfSyntheticWeb fingerprints every unique page of
// a crawltest web and compares the pairs the Index reports at k=3 with the
// web's ground-truth near-duplicate clusters (pages whose text differs in
// a date line and an edition number).
func TestNearDuplicateClustersOfSyntheticWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("serves a few hundred pages")
	}
	w, err := crawltest.NewWeb(crawltest.Config{Hosts: 4, PagesPerHost: 80, NoTraps: true, Seed: 15})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	truth := w.Truth()
	urls := truth.Unique()
	client := w.Client()
	ix, err := NewIndex(Config{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	fps := make([]uint64, len(urls))
	for i, u := range urls {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		fps[i], err = FingerprintHTML(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if err := ix.Add(fps[i], uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	cluster := func(i int) string { return truth.Pages[urls[i]].Cluster }
	truePairs := 0
	for i := range urls {
		for j := i + 1; j < len(urls); j++ {
			if cluster(i) != "" && cluster(i) == cluster(j) {
				truePairs++
			}
		}
	}
	found, correct := 0, 0
	for i := range urls {
		for _, m := range ix.Near(fps[i]) {
			j := int(m.ID)
			if j <= i {
				continue // each unordered pair once
			}
			found++
			if cluster(i) != "" && cluster(i) == cluster(j) {
				correct++
			}
		}
	}
	if truePairs == 0 {
		t.Fatal("the web has no near-duplicate clusters")
	}
	recall := float64(correct) / float64(truePairs)
	precision := 1.0
	if found > 0 {
		precision = float64(correct) / float64(found)
	}
	t.Logf("%d unique pages, %d clusters, %d true pairs; found %d pairs, %d correct: recall %.3f, precision %.3f",
		len(urls), len(truth.Clusters()), truePairs, found, correct, recall, precision)
	if recall < 0.95 || precision < 0.99 {
		t.Errorf("recall %.3f (want ≥ 0.95), precision %.3f (want ≥ 0.99)", recall, precision)
	}
}
