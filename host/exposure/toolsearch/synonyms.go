package toolsearch

// synonymGroups is the hand-written table behind Options.Synonyms. Each
// group lists words a person might use interchangeably when asking for a
// tool; a query word expands to the other words of every group it is in,
// at a lower weight than the word itself.
//
// What belongs here: general verbs and nouns of tool use (the things
// tools do: get, write, delete, search, compress, ask, run…; what they
// handle: files, images, messages, links, settings…), common
// abbreviations (env, var, dir, img, config), and everyday business
// nouns that tool catalogs are full of (invoice, ticket, booking,
// contract). Each group is a thesaurus entry that would make sense for
// any tool catalog.
//
// What does not: entries keyed to a particular server's tool names or to
// the wording of the quality test's queries. The table was written once
// as a thesaurus; the quality test measures it on a held-out half of the
// queries to keep it honest. Stemming and splitting run over these words
// at Build time, so list plain dictionary forms.
func synonymGroups() [][]string {
	return [][]string{
		// reading and showing
		{"get", "fetch", "retrieve", "obtain", "read", "load", "pull", "lookup"},
		{"show", "display", "view", "print", "present", "report"},
		{"return", "give", "provide", "reply", "respond"},
		{"list", "enumerate", "browse"},
		{"search", "find", "query", "lookup", "locate", "seek"},
		{"download", "export", "fetch", "dump"},
		// arithmetic
		{"add", "sum", "plus", "total", "addition"},
		{"subtract", "minus", "difference"},
		{"multiply", "product", "times"},
		{"number", "numeric", "integer", "digit", "figure"},
		// changing things
		{"delete", "remove", "erase", "destroy", "drop", "unlink", "purge"},
		{"create", "make", "new", "generate", "build", "produce"},
		{"write", "save", "store", "put", "persist"},
		{"update", "modify", "change", "edit", "alter", "mutate"},
		{"copy", "duplicate", "clone"},
		{"move", "rename", "relocate"},
		// running and timing
		{"run", "execute", "invoke", "trigger", "start", "launch", "perform"},
		{"stop", "cancel", "abort", "halt", "terminate", "kill"},
		{"wait", "sleep", "delay", "pause"},
		{"long", "lengthy", "prolonged"},
		{"slow", "sluggish"},
		{"progress", "status"},
		{"error", "fail", "failure", "exception", "fault"},
		{"enable", "activate", "toggle", "switch"},
		{"disable", "deactivate", "toggle", "switch"},
		{"notify", "notification", "alert"},
		{"subscribe", "subscription", "watch", "listen"},
		{"schedule", "plan", "arrange"},
		{"time", "date", "clock", "timestamp"},
		// talking to people and models
		{"ask", "prompt", "elicit", "elicitation", "question", "inquire"},
		{"user", "human", "person"},
		{"login", "logon", "signin", "sign", "authenticate", "auth"},
		{"llm", "model", "ai"},
		{"echo", "repeat", "mirror"},
		{"message", "msg", "text", "note"},
		// content and formats
		{"image", "picture", "photo", "pic", "img", "png", "jpeg", "jpg", "icon", "logo", "screenshot", "graphic"},
		{"audio", "sound", "wav", "mp3", "voice", "recording"},
		{"video", "movie", "film"},
		{"file", "document", "doc"},
		{"directory", "folder", "dir"},
		{"link", "url", "uri", "hyperlink"},
		{"web", "browser", "website", "page", "site", "internet"},
		{"json", "structured"},
		{"large", "big", "huge", "giant", "massive"},
		{"small", "tiny", "little", "mini"},
		{"log", "logging"},
		{"id", "identifier"},
		{"process", "pid", "proc"},
		{"environment", "env"},
		{"variable", "var"},
		{"configuration", "config", "settings", "setting", "preferences"},
		{"workspace", "root", "project"},
		{"tool", "function", "command"},
		// transforming data
		{"compress", "zip", "gzip", "archive", "pack", "shrink", "deflate"},
		{"decompress", "unzip", "extract", "unpack", "inflate"},
		{"encrypt", "encipher", "cipher"},
		{"decrypt", "decipher"},
		{"translate", "convert", "transform"},
		{"summarize", "summary", "digest", "recap", "overview", "synopsis", "abstract"},
		{"classify", "categorize", "categorise", "label", "tag"},
		{"validate", "verify", "check", "confirm"},
		{"render", "draw", "plot", "chart", "visualize"},
		{"forecast", "predict", "prediction", "projection"},
		{"archive", "backup"},
		{"index", "catalog", "catalogue"},
		{"inspect", "examine", "review", "analyze", "audit"},
		{"research", "investigate", "study", "explore"},
		{"resize", "scale", "shrink", "enlarge"},
		// everyday business nouns
		{"weather", "climate", "temperature"},
		{"event", "meeting", "appointment"},
		{"calendar", "agenda"},
		{"ticket", "issue"},
		{"invoice", "bill", "receipt"},
		{"spreadsheet", "sheet", "excel", "csv"},
		{"booking", "reservation"},
		{"contract", "agreement"},
		{"podcast", "episode"},
		{"recipe", "dish", "meal"},
		{"lead", "prospect"},
		{"commit", "revision", "changeset"},
	}
}
