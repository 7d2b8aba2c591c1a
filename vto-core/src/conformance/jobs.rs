//! The job store and queue contracts.

use super::*;

/// The [`JobStore`] + [`JobQueue`] contract.
pub async fn job_store<S, F, Fut>(make: F)
where
    S: JobStore + JobQueue,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    // insert / get round-trip every field; duplicates refused.
    let s = make().await;
    let job = sample_job(1, "acct_a", Category::Shirt, 0);
    s.insert(&job).await.expect("insert");
    assert_eq!(s.get(job.id).await.expect("get"), Some(job.clone()));
    assert!(matches!(
        s.insert(&job).await,
        Err(StoreError::AlreadyExists(_))
    ));
    assert_eq!(
        s.get(RequestId(uuid::Uuid::from_u128(99)))
            .await
            .expect("get"),
        None
    );

    // claim takes the oldest queued job, with a lease; an empty queue gives None.
    let s = make().await;
    let newer = sample_job(2, "acct_a", Category::Dress, 10);
    let older = sample_job(3, "acct_a", Category::Pants, 5);
    s.insert(&newer).await.expect("insert");
    s.insert(&older).await.expect("insert");
    let c = s
        .claim(at(100), Duration::from_secs(30))
        .await
        .expect("claim")
        .expect("a job");
    assert_eq!(c.id, older.id);
    assert_eq!(
        s.get_summary(newer.id)
            .await
            .expect("summary")
            .map(|j| j.status),
        Some(JobStatus::Queued)
    );
    assert_eq!(c.status, JobStatus::Processing);
    assert_eq!(c.lease_until, Some(at(30_100)));
    assert_eq!(c.started_at, Some(at(100)));
    assert_eq!(
        s.get(older.id).await.expect("get").expect("job").status,
        JobStatus::Processing
    );
    let c2 = s
        .claim(at(100), Duration::from_secs(30))
        .await
        .expect("claim")
        .expect("a job");
    assert_eq!(c2.id, newer.id);
    assert!(s
        .claim(at(100), Duration::from_secs(30))
        .await
        .expect("claim")
        .is_none());

    // expired leases are found; a lease extension by the current attempt counts, a stale one not.
    assert!(s
        .expired_leases(at(30_000))
        .await
        .expect("expired")
        .is_empty());
    assert!(s
        .extend_lease(older.id, 1, at(60_100))
        .await
        .expect("extend"));
    assert!(!s
        .extend_lease(older.id, 7, at(90_000))
        .await
        .expect("extend"));
    let mut expired = s.expired_leases(at(40_000)).await.expect("expired");
    expired.sort();
    assert_eq!(expired, vec![newer.id]);
    let requeued = s
        .apply(newer.id, &JobEvent::LeaseExpired, at(40_000))
        .await
        .expect("apply");
    assert_eq!((requeued.status, requeued.attempt), (JobStatus::Queued, 2));
    let again = s
        .claim(at(40_001), Duration::from_secs(30))
        .await
        .expect("claim")
        .expect("job");
    assert_eq!((again.id, again.attempt), (newer.id, 2));
    // A status read right after a claim sees it (a summary cache must follow every write).
    assert_eq!(
        s.get_summary(newer.id)
            .await
            .expect("summary")
            .map(|j| j.status),
        Some(JobStatus::Processing)
    );

    // a stale attempt cannot complete; the current one can, once.
    let stale = JobEvent::Complete {
        attempt: 1,
        result_key: "x.png".into(),
        processing_time_ms: 5,
    };
    assert!(matches!(
        s.apply(newer.id, &stale, at(40_002)).await,
        Err(StoreError::Transition(_))
    ));
    let done = JobEvent::Complete {
        attempt: 2,
        result_key: "x.png".into(),
        processing_time_ms: 5,
    };
    let finished = s
        .apply(newer.id, &done, at(40_003))
        .await
        .expect("complete");
    assert_eq!(finished.status, JobStatus::Success);
    assert_eq!(finished.result_key.as_deref(), Some("x.png"));
    assert_eq!(finished.processing_time_ms, Some(5));
    assert_eq!(finished.finished_at, Some(at(40_003)));
    assert_eq!(s.get(newer.id).await.expect("get"), Some(finished.clone()));
    assert_eq!(
        s.get_summary(newer.id).await.expect("summary"),
        Some(JobSummary::from(&finished))
    );
    // terminal states never change.
    for e in [
        JobEvent::Cancel,
        JobEvent::DeadlinePassed,
        JobEvent::LeaseExpired,
        done,
    ] {
        assert!(matches!(
            s.apply(newer.id, &e, at(40_004)).await,
            Err(StoreError::Transition(_))
        ));
    }
    assert_eq!(s.get(newer.id).await.expect("get"), Some(finished));
    assert!(matches!(
        s.apply(
            RequestId(uuid::Uuid::from_u128(77)),
            &JobEvent::Cancel,
            at(1)
        )
        .await,
        Err(StoreError::NotFound(_))
    ));

    // fail keeps the error; deadlines are found for unfinished jobs only.
    let fail = JobEvent::Fail {
        attempt: Some(1),
        error: ErrorBody::new(ErrorCode::ProcessingFailed, "no face"),
    };
    let failed = s.apply(older.id, &fail, at(50_000)).await.expect("fail");
    assert_eq!(
        failed.error.as_ref().map(|e| e.code),
        Some(ErrorCode::ProcessingFailed)
    );
    let late = sample_job(4, "acct_b", Category::Shirt, 1_000);
    s.insert(&late).await.expect("insert");
    assert_eq!(
        s.past_deadline(at(700_000)).await.expect("deadline"),
        vec![late.id]
    );
    let timed = s
        .apply(late.id, &JobEvent::DeadlinePassed, at(700_000))
        .await
        .expect("apply");
    assert_eq!(timed.error.map(|e| e.code), Some(ErrorCode::TimedOut));
    assert!(s
        .past_deadline(at(700_000))
        .await
        .expect("deadline")
        .is_empty());

    // Summaries follow every change: each equals the summary of the job as stored now.
    for id in [older.id, newer.id, late.id] {
        let job = s.get(id).await.expect("get").expect("stored");
        assert_eq!(
            s.get_summary(id).await.expect("summary"),
            Some(JobSummary::from(&job))
        );
    }
    assert_eq!(
        s.get_summary(RequestId(uuid::Uuid::from_u128(77)))
            .await
            .expect("summary"),
        None
    );

    // list filters by account and status, newest first; counts per status add up.
    let all = s.list(&JobFilter::default()).await.expect("list");
    assert_eq!(
        all.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![late.id, newer.id, older.id]
    );
    let b = s
        .list(&JobFilter {
            account_id: Some(AccountId::from("acct_b")),
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(b.len(), 1);
    let ok = s
        .list(&JobFilter {
            status: Some(JobStatus::Success),
            limit: 10,
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(ok.len(), 1);
    let counts = s.count_by_status().await.expect("counts");
    assert_eq!(counts.get(&JobStatus::Success), Some(&1));
    assert_eq!(counts.get(&JobStatus::Failed), Some(&2));
    assert_eq!(counts.values().sum::<u64>(), 3);
}

/// Concurrent claims never hand the same job to two workers.
pub async fn job_queue_concurrency<S, F, Fut>(make: F)
where
    S: JobStore + JobQueue + 'static,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    let s = Arc::new(make().await);
    for n in 0..40u128 {
        s.insert(&sample_job(100 + n, "acct_a", Category::Tshirt, n as i64))
            .await
            .expect("insert");
    }
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(j) = s
                .claim(at(1_000), Duration::from_secs(60))
                .await
                .expect("claim")
            {
                got.push(j.id);
            }
            got
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("task"));
    }
    all.sort();
    let before = all.len();
    all.dedup();
    assert_eq!(before, 40, "every job claimed");
    assert_eq!(all.len(), 40, "no job claimed twice");
}
