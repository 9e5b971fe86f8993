package tokenizer

import (
	"hash/maphash"
	"strings"
	"sync"
)

const (
	// cacheShards is the number of independently locked cache shards.
	cacheShards = 16
	// cacheGeneration is the number of words a shard's generation holds;
	// the cache holds at most 2*cacheShards*cacheGeneration words.
	cacheGeneration = 4096
)

// wordCache maps pre-tokenized words to their token IDs. It is bounded and
// safe for concurrent use. Each shard keeps two generations, an
// approximation of LRU that needs no list: new words go to the recent
// generation; when it is full it becomes the old one and the previous old
// one is dropped; a hit in the old generation moves the word to the recent
// one.
type wordCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

// cacheShard is one locked part of a wordCache.
type cacheShard struct {
	mu     sync.Mutex
	recent map[string][]int32
	old    map[string][]int32
	_      [40]byte // keeps shards on separate cache lines
}

func newWordCache() *wordCache {
	return &wordCache{seed: maphash.MakeSeed()}
}

func (c *wordCache) shard(w string) *cacheShard {
	return &c.shards[maphash.String(c.seed, w)%cacheShards]
}

// get returns the IDs of the word w. The caller must not modify them.
func (c *wordCache) get(w string) ([]int32, bool) {
	s := c.shard(w)
	s.mu.Lock()
	ids, ok := s.recent[w]
	if !ok {
		if ids, ok = s.old[w]; ok {
			s.addLocked(strings.Clone(w), ids)
		}
	}
	s.mu.Unlock()
	return ids, ok
}

// put stores the IDs of the word w, which it copies; ids must not be
// modified afterwards.
func (c *wordCache) put(w string, ids []int32) {
	s := c.shard(w)
	w = strings.Clone(w)
	s.mu.Lock()
	s.addLocked(w, ids)
	s.mu.Unlock()
}

func (s *cacheShard) addLocked(w string, ids []int32) {
	if len(s.recent) >= cacheGeneration {
		s.old = s.recent
		s.recent = nil
	}
	if s.recent == nil {
		s.recent = make(map[string][]int32)
	}
	s.recent[w] = ids
}
