//! A fixed set of resources lent one at a time ([`Pool`]): the renderer's pipelines, each
//! with its own vision networks and scratch buffers. A caller beyond the pool's size waits
//! for one to come back, as long as it takes or up to a limit ([`Pool::take_within`]), so a
//! synchronous request queued behind a burst is answered in bounded time.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Why [`Pool::take_within`] lent nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TakeError {
    /// An earlier panic poisoned the pool's lock.
    Poisoned,
    /// Every item stayed lent for the whole limit.
    Busy {
        /// How long the caller waited.
        waited: Duration,
    },
}

/// Items lent one at a time; a [`Lease`] gives its item back when dropped.
#[derive(Debug)]
pub struct Pool<T> {
    idle: Mutex<Vec<T>>,
    returned: Condvar,
    size: usize,
}

/// One item taken from a [`Pool`]; back in the pool when dropped.
pub struct Lease<'a, T> {
    pool: &'a Pool<T>,
    item: Option<T>,
}

impl<T> Pool<T> {
    /// A pool lending `items`.
    pub fn new(items: Vec<T>) -> Self {
        Pool {
            size: items.len(),
            idle: Mutex::new(items),
            returned: Condvar::new(),
        }
    }

    /// How many items the pool holds, lent or not.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Items lent right now (0 when the pool is poisoned: it lends nothing).
    pub fn lent(&self) -> usize {
        self.idle.lock().map_or(0, |idle| self.size - idle.len())
    }

    /// The idle items, locked (e.g. to warm every one up).
    pub fn lock(&self) -> Result<MutexGuard<'_, Vec<T>>, TakeError> {
        self.idle.lock().map_err(|_| TakeError::Poisoned)
    }

    /// Waits for an idle item at most `limit` (`None`: as long as it takes), and lends it.
    pub fn take_within(&self, limit: Option<Duration>) -> Result<Lease<'_, T>, TakeError> {
        let start = Instant::now();
        let mut idle = self.lock()?;
        loop {
            if let Some(item) = idle.pop() {
                return Ok(Lease {
                    pool: self,
                    item: Some(item),
                });
            }
            idle = match limit {
                None => self.returned.wait(idle).map_err(|_| TakeError::Poisoned)?,
                Some(limit) => {
                    let waited = start.elapsed();
                    if waited >= limit {
                        return Err(TakeError::Busy { waited });
                    }
                    self.returned
                        .wait_timeout(idle, limit - waited)
                        .map_err(|_| TakeError::Poisoned)?
                        .0
                }
            };
        }
    }
}

impl<T> std::ops::Deref for Lease<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.item
            .as_ref()
            .expect("a lease holds its item until dropped")
    }
}

impl<T> std::ops::DerefMut for Lease<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.item
            .as_mut()
            .expect("a lease holds its item until dropped")
    }
}

impl<T> Drop for Lease<'_, T> {
    fn drop(&mut self) {
        if let Some(item) = self.item.take() {
            // A poisoned lock means an earlier panic while it was held; the item is dropped
            // then, and later callers get `Poisoned`.
            if let Ok(mut idle) = self.pool.idle.lock() {
                idle.push(item);
            }
            self.pool.returned.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    #[test]
    fn a_caller_past_the_limit_is_told_busy_and_the_pool_still_lends_afterwards() {
        let pool = Pool::new(vec![7u32]);
        let held = pool.take_within(None).unwrap();
        assert_eq!(*held, 7);
        assert_eq!(pool.lent(), 1);
        let t0 = Instant::now();
        let Err(TakeError::Busy { waited }) = pool.take_within(Some(Duration::from_millis(60)))
        else {
            panic!("an empty pool lent an item");
        };
        assert!(waited >= Duration::from_millis(60), "{waited:?}");
        assert!(t0.elapsed() < Duration::from_secs(5));
        drop(held);
        assert_eq!(pool.lent(), 0);
        assert_eq!(*pool.take_within(Some(Duration::ZERO)).unwrap(), 7);
    }

    #[test]
    fn a_waiting_caller_gets_the_item_given_back_within_its_limit() {
        let pool = Arc::new(Pool::new(vec![1u32]));
        let held = pool.take_within(None).unwrap();
        let waiter = {
            let pool = pool.clone();
            thread::spawn(move || pool.take_within(Some(Duration::from_secs(30))).map(|l| *l))
        };
        thread::sleep(Duration::from_millis(50));
        drop(held);
        assert_eq!(waiter.join().unwrap(), Ok(1));
    }
}
