// Package toolsearch is the search engine behind the tool_search tool: it
// ranks deferred tool documents for a free-text query.
//
// It owns the ranking of tool documents and nothing else: tokenizing
// (identifier splitting, stop words, a Porter stemmer), the BM25 index,
// typo tolerance, the synonym table and exact-name matching. It must not
// know about MCP sessions, steps, catalogs or exposure policy: the caller
// turns whatever it holds into [Doc] values, decides which tools are
// deferred, validates the tool's arguments ("query must not be empty",
// "limit must be greater than zero" are the caller's errors) and shapes
// the answer for the model.
//
// # Ranking
//
// A tool is found by its flat model name, raw name, server name, title,
// description, top-level input property names and its server's
// instructions. The score is BM25 (Lucene IDF; k1 = 1.2, b = 0.75 unless
// set) over weighted word counts (a name or property word counts half a
// description word), with the server's instructions indexed once per
// server and weighted down, plus, for query words no tool contains,
// vocabulary words one edit away, plus synonyms from a small hand-written
// table of general tool vocabulary. Above every text score sit the tools the query names:
// the whole query spelling a tool's raw name, "server name" or flat name
// with any separators or case (tier 2), one edit away from one, or
// naming one inside a longer query or inside punctuation (tier 1). A list
// shorter than the limit is topped up with the other tools of the servers
// it holds, scored zero. Ties break by ID, so the same index and query
// always give the same list.
//
// [Options] switches every feature so the quality test can measure what
// each one buys; [DefaultOptions] is the shipped configuration, and
// quality_test.go prints the ablation table over two evaluation sets: the
// tuning set (server-everything and mcp-demo) that every weight was
// chosen on, and testdata/holdout (seven other real servers) that nothing
// was ever tuned on.
//
// # Lifecycle and concurrency
//
// [Build] once per catalog revision; the [Index] is immutable afterwards
// and [Index.Search] is safe for concurrent use. Search keeps per-call
// scratch space in a pool and starts no goroutines.
package toolsearch
