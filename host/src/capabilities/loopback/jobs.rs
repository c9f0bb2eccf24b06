//! Capture's jobs, as the Cortex play runs them: a conversation's sentences wait in a job that
//! ends at its `polls_to_complete`-th poll (at once when that is 0), completed (its sentences
//! become memories) or failed, when the script fails the next jobs of its session. Job ids are
//! `job-1`, `job-2`, … in submission order. Knows nothing of HTTP.

use std::collections::BTreeMap;

use super::memories::Memories;

/// A job's state, as `GET /v1/jobs/{id}` names it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JobStatus {
    Queued,
    Processing,
    Completed,
    Failed,
}

impl JobStatus {
    pub fn name(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Processing => "processing",
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }
}

struct Job {
    sentences: Vec<String>,
    session_id: Option<String>,
    reference_date: Option<String>,
    polls: u64,
    fails: bool,
    status: JobStatus,
}

/// Every job submitted, and what the script says of the next ones.
pub struct Jobs {
    jobs: Vec<Job>,
    polls_to_complete: u64,
    /// How many more jobs of a session fail.
    failing: BTreeMap<String, u64>,
}

impl Jobs {
    pub fn new(polls_to_complete: u64, failing: BTreeMap<String, u64>) -> Self {
        Self { jobs: Vec::new(), polls_to_complete, failing }
    }

    /// From now on, a job ends at its `polls`-th poll (0: at once).
    pub fn set_polls_to_complete(&mut self, polls: u64) {
        self.polls_to_complete = polls;
    }

    /// The next `times` jobs submitted for `session_id` fail.
    pub fn fail(&mut self, session_id: &str, times: u64) {
        self.failing.insert(session_id.to_string(), times);
    }

    /// Submits a job for `sentences`, ending it at once (into `memories`) when no poll is
    /// needed; returns its id.
    pub fn submit(
        &mut self,
        sentences: Vec<String>,
        session_id: Option<&str>,
        reference_date: Option<&str>,
        memories: &mut Memories,
    ) -> String {
        let left = session_id.and_then(|session| self.failing.get_mut(session)).filter(|left| **left > 0);
        let fails = left.map(|left| *left -= 1).is_some();
        self.jobs.push(Job {
            sentences,
            session_id: session_id.map(str::to_string),
            reference_date: reference_date.map(str::to_string),
            polls: 0,
            fails,
            status: JobStatus::Queued,
        });
        let index = self.jobs.len() - 1;
        if self.polls_to_complete == 0 {
            self.end(index, memories);
        }
        format!("job-{}", index + 1)
    }

    /// Polls job `id`: its status after this poll, `None` for no such job.
    pub fn poll(&mut self, id: &str, memories: &mut Memories) -> Option<JobStatus> {
        let index = id.strip_prefix("job-")?.parse::<usize>().ok()?.checked_sub(1)?;
        let job = self.jobs.get_mut(index)?;
        if matches!(job.status, JobStatus::Queued | JobStatus::Processing) {
            job.polls += 1;
            job.status = JobStatus::Processing;
            if job.polls >= self.polls_to_complete {
                self.end(index, memories);
            }
        }
        self.jobs.get(index).map(|job| job.status)
    }

    fn end(&mut self, index: usize, memories: &mut Memories) {
        let Some(job) = self.jobs.get_mut(index) else { return };
        job.status = if job.fails {
            JobStatus::Failed
        } else {
            memories.store(&job.sentences, job.session_id.as_deref(), job.reference_date.as_deref());
            JobStatus::Completed
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentences() -> Vec<String> {
        vec!["The deploy key rotates monthly.".to_string()]
    }

    #[test]
    fn without_polls_a_job_is_completed_at_once_and_its_sentences_are_memories() {
        let (mut jobs, mut memories) = (Jobs::new(0, BTreeMap::new()), Memories::seeded(Vec::new()));
        assert_eq!(jobs.submit(sentences(), Some("s"), Some("2026-01-05"), &mut memories), "job-1");
        assert_eq!(memories.all().len(), 1);
        assert_eq!(memories.all()[0].reference_date.as_deref(), Some("2026-01-05"));
        assert_eq!(jobs.poll("job-1", &mut memories), Some(JobStatus::Completed));
        assert_eq!(jobs.poll("job-2", &mut memories), None);
        assert_eq!(jobs.poll("job-0", &mut memories), None);
    }

    #[test]
    fn a_job_waits_for_its_polls_and_a_failed_session_stores_nothing() {
        let failing = BTreeMap::from([("bad".to_string(), 1)]);
        let (mut jobs, mut memories) = (Jobs::new(2, failing), Memories::seeded(Vec::new()));
        let good = jobs.submit(sentences(), Some("good"), None, &mut memories);
        let bad = jobs.submit(sentences(), Some("bad"), None, &mut memories);
        let again = jobs.submit(sentences(), Some("bad"), None, &mut memories);
        assert_eq!(jobs.poll(&good, &mut memories), Some(JobStatus::Processing));
        assert!(memories.all().is_empty(), "nothing is stored before the job completes");
        assert_eq!(jobs.poll(&good, &mut memories), Some(JobStatus::Completed));
        assert_eq!(jobs.poll(&bad, &mut memories).map(JobStatus::name), Some("processing"));
        assert_eq!(jobs.poll(&bad, &mut memories), Some(JobStatus::Failed));
        assert_eq!(jobs.poll(&again, &mut memories), Some(JobStatus::Processing));
        assert_eq!(jobs.poll(&again, &mut memories), Some(JobStatus::Completed), "only the next job failed");
        assert_eq!(memories.all().len(), 2);
        assert_eq!(memories.sessions(), 2);
    }
}
