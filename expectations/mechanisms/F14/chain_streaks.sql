-- explains: flip_bounds.ref_chain_depth_within_bound
-- F14 with F7 in one chain (the PR's semantics): a ref chain past the bound from N whose links, cut at every counter
-- reset (a GLOBAL completion a link crosses, F14; a JobManager failover between a link's two decisions, F7), make
-- streaks no longer than max-consecutive-failures, one of them started by a link of F14's (_chain_streaks.sql).
-- skipped_reset.sql follows a chain only up to its first such link; here a JobManager failover may cut it before. A
-- chain with a streak past the bound, or none started by F14's link, is not F14's.
WITH RECURSIVE
-- include: _chain_streaks.sql
SELECT run_id, head AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM streaks WHERE used14 = 1
