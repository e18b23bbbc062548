-- explains: flip_bounds.ref_chain_depth_within_bound
-- F7 (PR) with F14 in one chain: a ref chain past the bound from N whose links, cut at every counter reset (a
-- JobManager failover between a link's two decisions, F7; a GLOBAL completion a link crosses, F14), make streaks no
-- longer than max-consecutive-failures, one of them started by a JobManager failover (_chain_streaks.sql). chain.sql
-- follows a chain only down to the last GLOBAL checkpoint before N; here the chain may cross it through a link of
-- F14's (a REGIONAL checkpoint that grafted from before a GLOBAL one that completed before its decision). A chain with
-- a streak past the bound, or none started by a failover, is not F7's.
WITH RECURSIVE
-- include: _chain_streaks.sql
SELECT run_id, head AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM streaks WHERE used7 = 1
