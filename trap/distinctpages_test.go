package trap

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// templated returns fingerprints as a template dominates them: each lies
// 1 to 3 bits from the template's, all within its 16 low bits, so that
// many pages share a fingerprint exactly and all lie within 6 bits of each
// other. This is the worst case of a SimHash over template-heavy pages.
func templated(r *rand.Rand) uint64 {
	const template = 0x5a5a_c3c3_0f0f_0000
	fp := uint64(template)
	for bits.OnesCount64(fp^template) < 1+r.IntN(3) {
		fp ^= 1 << r.IntN(16)
	}
	return fp
}

// coverage crawls web from its home page and requires that every page
// under prefix is fetched and no verdict rejects one.
func coverage(t *testing.T, web webFunc, home, prefix string, want int) {
	t.Helper()
	for _, observe := range []string{"ObservePage", "Observe"} {
		t.Run(observe, func(t *testing.T) {
			d := New(Config{})
			if observe == "Observe" {
				// A caller that does not know the links: only identical
				// fingerprints count, and templated pages share them too.
				res := simulateFunc(t, d, web, []string{home}, 100_000, func(u string, p page) Verdict {
					return d.Observe(u, p.fp)
				})
				check(t, res, prefix, want)
				return
			}
			check(t, simulate(t, d, web, []string{home}, 100_000), prefix, want)
		})
	}
}

func check(t *testing.T, res crawlResult, prefix string, want int) {
	t.Helper()
	got := 0
	for _, urls := range res.fetched {
		for _, u := range urls {
			if strings.HasPrefix(pathOf(u), prefix) {
				got++
			}
		}
	}
	if got != want || len(res.rejected) != 0 {
		t.Fatalf("fetched %d of %d pages under %s; rejections %v", got, want, prefix, res.rejected)
	}
}

// TestTemplatedCatalogueIsCovered: a shop of 1,200 products under one
// pattern, /product/{n}, whose pages a template dominates (fingerprints a
// few bits apart, many equal), each linking to the shop's navigation and
// to four other products. No verdict may stop a product.
func TestTemplatedCatalogueIsCovered(t *testing.T) {
	const n = 1200
	r := rand.New(rand.NewPCG(3, 5))
	fps := make([]uint64, n)
	related := make([][4]int, n)
	for i := range fps {
		fps[i] = templated(r)
		related[i] = [4]int{(i + 1) % n, r.IntN(n), r.IntN(n), (i*37 + 11) % n}
	}
	base := "http://shop.example"
	web := func(u string) (page, bool) {
		p := pathOf(u)
		if p == "/" {
			return page{links: []string{base + "/product/0", base + "/cart", base + "/about"}, fp: fpOf(u)}, true
		}
		i, err := strconv.Atoi(strings.TrimPrefix(p, "/product/"))
		if err != nil || i < 0 || i >= n {
			return page{}, false
		}
		links := []string{base + "/", base + "/cart", base + "/about"}
		for _, j := range related[i] {
			links = append(links, fmt.Sprintf("%s/product/%d", base, j))
		}
		return page{links: links, fp: fps[i]}, true
	}
	coverage(t, web, base+"/", "/product/", n)
}

// TestNumberedDocumentationIsCovered: a book of numbered sections
// (/book/ch03/s3-2-4.html) with fingerprints a few bits apart, whose pages
// link to the contents, their chapter's index, and the previous and next
// section, with or without a sidebar of the chapter's sections.
func TestNumberedDocumentationIsCovered(t *testing.T) {
	for _, sidebar := range []bool{true, false} {
		t.Run(fmt.Sprintf("sidebar=%v", sidebar), func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 9))
			base := "http://docs.example"
			var sections []string // paths in reading order
			chapter := map[string]int{}
			for c := 1; c <= 12; c++ {
				for a := 1; a <= 4; a++ {
					for b := 1; b <= 6; b++ {
						p := fmt.Sprintf("/book/ch%02d/s%d-%d-%d.html", c, c, a, b)
						chapter[p] = c
						sections = append(sections, p)
					}
				}
			}
			index := map[string]int{}
			fps := map[string]uint64{}
			for i, p := range sections {
				index[p] = i
				fps[p] = templated(r)
			}
			web := func(u string) (page, bool) {
				p := pathOf(u)
				switch {
				case p == "/book/":
					return page{links: []string{base + sections[0]}, fp: fpOf(u)}, true
				case strings.HasSuffix(p, "/index.html"):
					return page{links: []string{base + "/book/"}, fp: fpOf(u)}, true
				}
				i, ok := index[p]
				if !ok {
					return page{}, false
				}
				c := chapter[p]
				links := []string{base + "/book/", fmt.Sprintf("%s/book/ch%02d/index.html", base, c)}
				if i > 0 {
					links = append(links, base+sections[i-1])
				}
				if i+1 < len(sections) {
					links = append(links, base+sections[i+1])
				}
				if sidebar {
					for _, q := range sections {
						if chapter[q] == c {
							links = append(links, base+q)
						}
					}
				}
				return page{links: links, fp: fps[p]}, true
			}
			coverage(t, web, base+"/book/", "/book/ch", len(sections)+12)
		})
	}
}
