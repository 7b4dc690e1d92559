package usage

import "strings"

// aiprefLabels maps the labels of draft-ietf-aipref-vocab to purposes: the
// current ones (§6.1: "train-ai", "search") and those of its earlier
// revisions (vocab-02 "all", "ai-use"; vocab-03 "bots", "train-genai").
// Labels are case-sensitive (§6.1); unknown ones are ignored (§6.4).
var aiprefLabels = map[string]Purpose{
	"search":      Search,
	"train-ai":    AITraining,
	"train-genai": GenAITraining,
	"ai-use":      AIInput,
	"bots":        Automated,
	"all":         Automated,
}

// ParseContentUsage reads a statement of preference in the format of
// draft-ietf-aipref-vocab §6: an RFC 9651 Dictionary whose members map a
// category label to the Token y (allow) or n (disallow). Any other value,
// and any parameter, leaves the category unknown (§6.5); a field that does
// not parse states nothing and ok is false. It is the value of the
// Content-Usage header (draft-ietf-aipref-attach §2) and of a robots.txt
// Content-Usage rule after its path (§3.2).
func ParseContentUsage(field string) (st Statement, ok bool) {
	if len(field) > maxField {
		return st, false
	}
	members, ok := parseDictionary(field)
	if !ok {
		return st, false
	}
	for _, m := range members {
		p, known := aiprefLabels[m.key]
		if !known {
			continue
		}
		switch m.token {
		case "y":
			st.v[p] = Allowed
		case "n":
			st.v[p] = Disallowed
		}
	}
	return st, true
}

// contentSignalKeys maps the signals of Cloudflare's Content Signals
// Policy (contentsignals.org) to purposes.
var contentSignalKeys = map[string]Purpose{
	"search":   Search,
	"ai-train": AITraining,
	"ai-input": AIInput,
}

// ParseContentSignal reads a Content-Signal value (Cloudflare's Content
// Signals Policy): comma-separated signal=yes|no pairs such as
// "search=yes, ai-train=no". Keys and values are read case-insensitively;
// unknown signals and values other than yes and no say nothing, and a
// signal named twice combines most-restrictively.
func ParseContentSignal(value string) Statement {
	var st Statement
	if len(value) > maxField {
		value = value[:maxField]
	}
	for value != "" {
		var pair string
		pair, value, _ = strings.Cut(value, ",")
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			continue
		}
		p, known := contentSignalKeys[strings.ToLower(strings.TrimSpace(k))]
		if !known {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "yes":
			st.Set(p, Allowed)
		case "no":
			st.Set(p, Disallowed)
		}
	}
	return st
}
