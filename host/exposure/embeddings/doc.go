// Package embeddings is tool_search's optional semantic ranking: it asks
// an OpenAI-compatible embeddings endpoint (POST …/v1/embeddings) for
// text vectors, caches the vector of each tool definition, and ranks
// tools by cosine similarity to the query.
//
// It owns the HTTP exchange with the endpoint, the per-definition cache
// and the similarity ranking. It must not decide what to do when the
// endpoint fails (the caller falls back to BM25 alone), fuse rankings
// (the caller does, by reciprocal rank), or log: the API key is only ever
// put in the Authorization header, never in an error.
package embeddings
