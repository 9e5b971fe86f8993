// Package scoring will hold the contextual models: tokenization, the network
// core, the discriminative and generative models, and the arithmetic of the
// context scores and pair labels. It has no code yet.
package scoring
