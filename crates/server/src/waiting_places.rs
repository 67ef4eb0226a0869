//! The places for checks that wait for their order to change. Each waiting
//! check holds an open request (memory, a task), so there are at most so many
//! server-wide, and so many per client address and per customer: one client
//! holding thousands of checks open would otherwise take every place and leave
//! every other customer's checks answered at once. A check that finds no place
//! is not refused: it is answered as the order is now, and the page asks again
//! an interval later, as if it had not asked to wait.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why a check found no place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoPlace {
    /// The server holds as many waiting checks as it allows.
    Server,
    /// This client address does.
    Client,
    /// This customer does.
    Customer,
}

impl NoPlace {
    /// The metrics' label.
    pub fn label(self) -> &'static str {
        match self {
            NoPlace::Server => "full",
            NoPlace::Client => "client_full",
            NoPlace::Customer => "customer_full",
        }
    }
}

/// How many places each holder has taken; an entry goes when its count is back to 0.
#[derive(Debug)]
struct Counts<K> {
    most: usize,
    taken: Mutex<HashMap<K, usize>>,
}

impl<K: Hash + Eq + Clone> Counts<K> {
    fn new(most: u32) -> Self {
        Self { most: usize::try_from(most).unwrap_or(usize::MAX), taken: Mutex::new(HashMap::new()) }
    }

    fn take(&self, key: &K) -> bool {
        let mut taken = self.taken.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = taken.entry(key.clone()).or_default();
        if *count >= self.most {
            if *count == 0 {
                taken.remove(key);
            }
            return false;
        }
        *count += 1;
        true
    }

    fn give_back(&self, key: &K) {
        let mut taken = self.taken.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = taken.get_mut(key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                taken.remove(key);
            }
        }
    }
}

#[derive(Debug)]
pub struct WaitingPlaces {
    server: Arc<Semaphore>,
    clients: Counts<IpAddr>,
    customers: Counts<String>,
}

impl WaitingPlaces {
    pub fn new(server: u32, per_client: u32, per_customer: u32) -> Self {
        Self {
            server: Arc::new(Semaphore::new(usize::try_from(server).unwrap_or(Semaphore::MAX_PERMITS))),
            clients: Counts::new(per_client),
            customers: Counts::new(per_customer),
        }
    }

    /// A place for one waiting check, held until the returned value is dropped.
    pub fn take(self: &Arc<Self>, client: IpAddr, customer: &str) -> Result<Place, NoPlace> {
        let permit = self.server.clone().try_acquire_owned().map_err(|_| NoPlace::Server)?;
        if !self.clients.take(&client) {
            return Err(NoPlace::Client);
        }
        if !self.customers.take(&customer.to_owned()) {
            self.clients.give_back(&client);
            return Err(NoPlace::Customer);
        }
        Ok(Place { places: self.clone(), client, customer: customer.to_owned(), _permit: permit })
    }

    /// Holders with a place now, for tests: no entry outlives its last place.
    #[cfg(test)]
    fn holders(&self) -> (usize, usize) {
        (self.clients.taken.lock().unwrap().len(), self.customers.taken.lock().unwrap().len())
    }
}

/// One waiting check's place; given back when dropped, also when the client
/// hangs up mid-wait (the request's future is then dropped with it).
#[derive(Debug)]
pub struct Place {
    places: Arc<WaitingPlaces>,
    client: IpAddr,
    customer: String,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.places.clients.give_back(&self.client);
        self.places.customers.give_back(&self.customer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([192, 0, 2, last])
    }

    #[test]
    fn a_customer_gets_its_few_places_and_others_still_get_theirs() {
        let places = Arc::new(WaitingPlaces::new(100, 100, 2));
        let held = [places.take(ip(1), "a").unwrap(), places.take(ip(1), "a").unwrap()];
        assert_eq!(places.take(ip(1), "a").unwrap_err(), NoPlace::Customer);
        assert!(places.take(ip(1), "b").is_ok(), "another customer of the same address still waits");
        drop(held);
        assert!(places.take(ip(1), "a").is_ok(), "places come back when checks end");
    }

    #[test]
    fn one_address_cannot_take_every_place_of_the_server() {
        let places = Arc::new(WaitingPlaces::new(10, 3, 100));
        let held: Vec<Place> = (0..3).map(|n| places.take(ip(1), &format!("c{n}")).unwrap()).collect();
        assert_eq!(places.take(ip(1), "c9").unwrap_err(), NoPlace::Client);
        assert!(places.take(ip(2), "d").is_ok(), "another address still waits");
        drop(held);
    }

    #[test]
    fn the_servers_limit_comes_first_and_a_refusal_keeps_nothing() {
        let places = Arc::new(WaitingPlaces::new(1, 5, 5));
        let held = places.take(ip(1), "a").unwrap();
        assert_eq!(places.take(ip(2), "b").unwrap_err(), NoPlace::Server);
        let refused_by_customer = Arc::new(WaitingPlaces::new(5, 5, 0));
        assert_eq!(refused_by_customer.take(ip(1), "a").unwrap_err(), NoPlace::Customer);
        assert_eq!(refused_by_customer.holders(), (0, 0), "the address's place was given back");
        drop(held);
        assert_eq!(places.holders(), (0, 0), "no entry outlives its last place");
    }
}
