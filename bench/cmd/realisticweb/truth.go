package main

// truth returns the pages a robots-respecting crawler reaches from the
// seeds (every host's home page) following at most maxDepth links (0: no
// bound), as a set of page indexes. Pages the host's robots.txt disallows
// are neither fetched nor followed. It needs the links render recorded.
func (s *site) truth(maxDepth int) map[int]bool {
	reached := map[int]bool{}
	var frontier []int
	for _, h := range s.hosts {
		reached[h.first] = true
		frontier = append(frontier, h.first)
	}
	for depth := 1; len(frontier) > 0 && (maxDepth == 0 || depth <= maxDepth); depth++ {
		var next []int
		for _, id := range frontier {
			for _, t := range s.pages[id].links {
				tp := s.pages[t]
				if reached[int(t)] || s.hosts[tp.host].robots.disallows(tp.path) {
					continue
				}
				reached[int(t)] = true
				next = append(next, int(t))
			}
		}
		frontier = next
	}
	return reached
}
