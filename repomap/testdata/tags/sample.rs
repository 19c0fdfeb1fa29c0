use std::collections::HashMap;
pub use self::store::{Backend, Memory as Mem};
pub(crate) use self::store::Hidden;

pub const LIMIT: usize = 10;

pub struct Cache<K, V> {
    map: HashMap<K, V>,
}

pub trait Store {
    fn get(&self, key: &str) -> Option<String>;
}

pub enum Mode {
    Fast,
    Slow,
}

impl<K, V> Cache<K, V> {
    pub fn new() -> Self {
        Cache { map: HashMap::new() }
    }

    pub(crate) fn shrink(&mut self) {}

    fn evict(&mut self) {}
}

impl Store for Cache<String, String> {
    fn get(&self, key: &str) -> Option<String> {
        self.map.get(key).cloned()
    }
}

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

pub fn run(mode: Mode) -> usize {
    let c: Cache<String, String> = Cache::new();
    helper(square!(LIMIT))
}

#[unstable(feature = "preview", issue = "none")]
pub fn preview() {}

fn helper(n: usize) -> usize {
    n
}
