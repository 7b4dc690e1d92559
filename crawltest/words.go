package crawltest

// words is the vocabulary of the generated prose.
var words = [...]string{
	"about", "above", "access", "account", "across", "action", "active", "actual", "add", "address",
	"advance", "after", "again", "against", "agent", "agree", "ahead", "allow", "almost", "alone",
	"along", "already", "also", "always", "amount", "analysis", "answer", "apply", "approach", "archive",
	"area", "argue", "around", "article", "aspect", "assume", "attempt", "author", "available", "average",
	"balance", "base", "basic", "batch", "become", "before", "begin", "behind", "believe", "below",
	"benefit", "better", "between", "beyond", "block", "board", "body", "border", "branch", "break",
	"bridge", "brief", "bring", "broad", "budget", "build", "buffer", "cache", "calendar", "call",
	"capacity", "careful", "carry", "case", "catalog", "cause", "center", "certain", "chain", "change",
	"channel", "chapter", "check", "choice", "claim", "clear", "client", "close", "cluster", "collect",
	"column", "common", "compare", "complete", "concern", "consider", "contain", "content", "context", "control",
	"copy", "corner", "correct", "cost", "count", "course", "cover", "crawl", "create", "current",
	"data", "debate", "decide", "deep", "default", "define", "degree", "delay", "deliver", "demand",
	"depend", "depth", "describe", "design", "detail", "detect", "develop", "differ", "direct", "discover",
	"display", "distance", "divide", "document", "domain", "during", "early", "easy", "edge", "effect",
	"effort", "either", "element", "enable", "engine", "enough", "entire", "entry", "equal", "error",
	"estimate", "event", "every", "evidence", "exact", "example", "expect", "explain", "export", "extend",
	"factor", "feature", "field", "figure", "filter", "final", "follow", "force", "format", "forward",
	"frame", "fresh", "front", "further", "gather", "general", "given", "global", "govern", "graph",
	"group", "growth", "guide", "handle", "harbor", "header", "health", "history", "holder", "however",
	"idea", "image", "impact", "import", "improve", "include", "index", "inside", "instead", "interest",
	"issue", "journal", "keep", "label", "language", "large", "later", "layer", "lead", "learn",
	"level", "library", "light", "limit", "line", "link", "listen", "little", "local", "machine",
	"maintain", "major", "manner", "map", "market", "matter", "measure", "medium", "member", "memory",
	"method", "middle", "minor", "model", "moment", "monitor", "morning", "motion", "narrow", "natural",
	"network", "never", "notice", "number", "object", "observe", "offer", "often", "open", "order",
	"origin", "other", "outline", "output", "owner", "page", "paper", "parent", "partner", "pattern",
	"perhaps", "period", "person", "picture", "place", "plain", "planet", "point", "policy", "portal",
	"position", "practice", "prepare", "present", "press", "pretty", "prevent", "price", "primary", "process",
	"produce", "program", "project", "proper", "provide", "public", "purpose", "quality", "query", "question",
	"quiet", "quite", "random", "range", "rather", "reach", "reason", "record", "reduce", "region",
	"release", "remain", "remote", "report", "request", "require", "research", "result", "return", "review",
	"river", "route", "sample", "scale", "schedule", "search", "season", "second", "section", "select",
	"series", "server", "service", "session", "settle", "shape", "share", "signal", "simple", "single",
	"source", "space", "special", "stable", "standard", "station", "steady", "storage", "story", "stream",
	"street", "strong", "structure", "study", "subject", "summer", "supply", "support", "surface", "system",
	"table", "target", "theory", "thread", "through", "timber", "today", "together", "topic", "toward",
	"track", "trade", "travel", "true", "typical", "under", "unit", "update", "useful", "usual",
	"valley", "value", "various", "version", "village", "visit", "volume", "water", "weather", "window",
	"winter", "within", "without", "wonder", "worker", "world", "writer", "yellow", "yield", "zone",
}

// slugWords name pages in their URLs. "draft" and "public" exist to meet
// the wildcard robots rules.
var slugWords = [...]string{
	"alpha", "amber", "atlas", "beacon", "birch", "canyon", "cedar", "coral", "delta", "draft",
	"ember", "falcon", "fern", "glacier", "harbor", "horizon", "island", "jade", "juniper", "lagoon",
	"lantern", "maple", "meadow", "nebula", "oasis", "orbit", "pebble", "pine", "prairie", "public",
	"quartz", "raven", "ridge", "saffron", "sierra", "spruce", "summit", "tundra", "valley", "willow",
}
