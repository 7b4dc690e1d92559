package frontierapi

// SetRecentLimits sets the bounds of s's table of ended leases.
func SetRecentLimits(s *Server, ids, urls int) {
	s.mu.Lock()
	s.recent.maxIDs, s.recent.maxURLs = ids, urls
	s.mu.Unlock()
}

// RecentLeases returns how many ended lease IDs, and URLs of them, s
// remembers, after forgetting those whose time has passed.
func RecentLeases(s *Server) (ids, urls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recent.expireLocked(s.cfg.Now())
	return len(s.recent.byID), s.recent.urls
}
