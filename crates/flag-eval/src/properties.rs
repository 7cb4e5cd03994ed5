//! Custom context properties: a small map tuned for the few lookups each evaluation makes.

use std::collections::HashMap;
use std::fmt;

use rustc_hash::FxHashMap;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::text::{Key, KeyedText};

/// Maps with more entries than this keep a hash index instead of slots.
const SCAN_LIMIT: usize = 16;

/// Slots of the small table: twice the entries it holds at most, so probes stay short.
const SLOTS: usize = 32;

/// Custom context properties, by name.
///
/// Contexts usually carry a handful of properties, and a constraint looks one up by name on every
/// evaluation. Up to 16 entries, a table of 32 one-byte slots, placed by the name's prepared key
/// (its length and two words, see `text::Key`), finds an entry in one or two probes without
/// hashing the name's bytes; past 16 entries a hash index takes over. Each value's key is kept
/// too, so that `IN` and `NOT_IN` compare it without reading the value again.
#[derive(Clone, Default)]
pub struct Properties {
    entries: Vec<Entry>,
    /// Position + 1 of the entry placed in each slot, 0 for none; unused once `index` is built.
    slots: [u8; SLOTS],
    index: Option<FxHashMap<String, usize>>,
}

#[derive(Clone)]
struct Entry {
    name_key: Key,
    value_key: Key,
    name: String,
    value: String,
}

impl Entry {
    fn new(name: String, value: String) -> Self {
        Self {
            name_key: Key::of(name.as_bytes()),
            value_key: Key::of(value.as_bytes()),
            name,
            value,
        }
    }
}

impl Properties {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of `name`, if set.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&str> {
        let key = Key::of(name.as_bytes());
        self.find(key, key.mixed(), name)
            .map(|entry| entry.value.as_str())
    }

    /// The value of a name whose key was prepared when its constraint was compiled, with the
    /// value's key.
    #[inline(always)]
    pub(crate) fn get_keyed(&self, name: &KeyedText) -> Option<(&str, Key)> {
        self.find(name.key(), name.mixed(), name.as_str())
            .map(|entry| (entry.value.as_str(), entry.value_key))
    }

    #[inline(always)]
    fn find(&self, key: Key, mixed: u32, name: &str) -> Option<&Entry> {
        if let Some(index) = &self.index {
            return Self::indexed(index, name).and_then(|position| self.entries.get(position));
        }
        let mut slot = mixed as usize % SLOTS;
        loop {
            let entry = self.entries.get(usize::from(self.slots[slot]).checked_sub(1)?)?;
            if entry.name_key == key && (key.is_exact() || entry.name == name) {
                return Some(entry);
            }
            slot = (slot + 1) % SLOTS;
        }
    }

    /// A look-up in the index of a large map, kept out of line: most contexts are small.
    #[inline(never)]
    fn indexed(index: &FxHashMap<String, usize>, name: &str) -> Option<usize> {
        index.get(name).copied()
    }

    /// Sets `name`, returning its previous value.
    pub fn insert(&mut self, name: String, value: String) -> Option<String> {
        if let Some(entry) = self
            .position(&name)
            .and_then(|position| self.entries.get_mut(position))
        {
            entry.value_key = Key::of(value.as_bytes());
            return Some(std::mem::replace(&mut entry.value, value));
        }
        if let Some(index) = &mut self.index {
            index.insert(name.clone(), self.entries.len());
        }
        let entry = Entry::new(name, value);
        let key = entry.name_key;
        self.entries.push(entry);
        if self.index.is_some() {
            // The index holds the new entry already.
        } else if self.entries.len() <= SCAN_LIMIT {
            self.place(key, self.entries.len());
        } else {
            self.index = Some(
                self.entries
                    .iter()
                    .enumerate()
                    .map(|(position, entry)| (entry.name.clone(), position))
                    .collect(),
            );
        }
        None
    }

    /// Puts the entry numbered `number` (position + 1), whose name has `key`, in the first free
    /// slot from its own. With at most 16 entries in 32 slots, one is always free.
    fn place(&mut self, key: Key, number: usize) {
        let mut slot = key.mixed() as usize % SLOTS;
        while self.slots[slot] != 0 {
            slot = (slot + 1) % SLOTS;
        }
        self.slots[slot] = u8::try_from(number).unwrap_or(u8::MAX);
    }

    /// Sets `name` to `value`, reusing the memory of an earlier value: no allocation when `name`
    /// is already set and its value's buffer is large enough.
    pub fn set(&mut self, name: &str, value: &str) {
        match self
            .position(name)
            .and_then(|position| self.entries.get_mut(position))
        {
            Some(entry) => {
                entry.value.clear();
                entry.value.push_str(value);
                entry.value_key = Key::of(value.as_bytes());
            }
            None => {
                self.insert(name.to_owned(), value.to_owned());
            }
        }
    }

    /// Unsets `name`, returning its value. The last entry takes its place, so the order of the
    /// others is kept only up to that move.
    pub fn remove(&mut self, name: &str) -> Option<String> {
        let position = match &mut self.index {
            Some(index) => index.remove(name)?,
            None => self.entries.iter().position(|entry| entry.name == name)?,
        };
        let removed = self.entries.swap_remove(position);
        match &mut self.index {
            Some(index) => {
                if let Some(moved) = self.entries.get(position) {
                    index.insert(moved.name.clone(), position);
                }
            }
            // Positions moved: the slots are placed again.
            None => {
                self.slots = [0; SLOTS];
                let keys: Vec<Key> = self.entries.iter().map(|entry| entry.name_key).collect();
                for (number, key) in (1..).zip(keys) {
                    self.place(key, number);
                }
            }
        }
        Some(removed.value)
    }

    /// Where `name`'s entry is, found without the slots: for changes, which are rare.
    fn position(&self, name: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => self.entries.iter().position(|entry| entry.name == name),
        }
    }

    /// Number of properties.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The properties in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|entry| (entry.name.as_str(), entry.value.as_str()))
    }
}

impl PartialEq for Properties {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(key, value)| other.get(key) == Some(value))
    }
}

impl Eq for Properties {}

impl fmt::Debug for Properties {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_map().entries(self.iter()).finish()
    }
}

impl FromIterator<(String, String)> for Properties {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        let mut properties = Self::new();
        for (key, value) in iter {
            properties.insert(key, value);
        }
        properties
    }
}

impl<S> From<HashMap<String, String, S>> for Properties {
    fn from(map: HashMap<String, String, S>) -> Self {
        map.into_iter().collect()
    }
}

impl Serialize for Properties {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (key, value) in self.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Reads a JSON object leniently: numbers and booleans become strings, `null`, arrays and objects
/// are left out, and `null` for the whole map is an empty map.
impl<'de> Deserialize<'de> for Properties {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PropertiesVisitor;

        impl<'de> Visitor<'de> for PropertiesVisitor {
            type Value = Properties;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an object of context properties")
            }

            fn visit_unit<E>(self) -> Result<Properties, E> {
                Ok(Properties::new())
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Properties, A::Error> {
                let mut properties = Properties::new();
                while let Some((key, value)) = access.next_entry::<String, serde_json::Value>()? {
                    if let Some(text) = crate::context::scalar(value) {
                        properties.insert(key, text);
                    }
                }
                Ok(properties)
            }
        }

        deserializer.deserialize_any(PropertiesVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_indexed_maps_agree() {
        let mut small = Properties::new();
        for count in 0..40 {
            small.insert(format!("key-{count}"), format!("value-{count}"));
            for probe in 0..=count {
                assert_eq!(
                    small.get(&format!("key-{probe}")),
                    Some(format!("value-{probe}").as_str())
                );
            }
            assert_eq!(small.get("missing"), None);
        }
        assert!(small.index.is_some());
        assert_eq!(small.insert("key-3".into(), "new".into()), Some("value-3".into()));
        assert_eq!(small.get("key-3"), Some("new"));
        assert_eq!(small.len(), 40);
    }

    #[test]
    fn remove_keeps_small_and_indexed_maps_consistent() {
        for size in [5, 40] {
            let mut properties: Properties = (0..size)
                .map(|count| (format!("key-{count}"), format!("value-{count}")))
                .collect();
            assert_eq!(properties.remove("key-1"), Some("value-1".into()));
            assert_eq!(properties.remove("key-1"), None);
            assert_eq!(properties.get("key-1"), None);
            assert_eq!(properties.len(), size - 1);
            for probe in (0..size).filter(|probe| *probe != 1) {
                assert_eq!(
                    properties.get(&format!("key-{probe}")),
                    Some(format!("value-{probe}").as_str()),
                    "size {size}, key-{probe}"
                );
            }
            properties.insert("key-1".into(), "again".into());
            assert_eq!(properties.get("key-1"), Some("again"));
            properties.set("key-1", "in place");
            properties.set("new", "added");
            assert_eq!(properties.get("key-1"), Some("in place"));
            assert_eq!(properties.get("new"), Some("added"));
            assert_eq!(properties.len(), size + 1);
        }
    }

    #[test]
    fn slots_stay_right_through_many_removals_and_insertions() {
        // Small maps (slots) and maps that outgrew them (index), emptied and refilled again and
        // again: every name stays findable and no insertion runs out of slots.
        for size in [3, 16, 17, 30] {
            let mut properties: Properties = (0..size)
                .map(|count| (format!("k{count}"), format!("v{count}")))
                .collect();
            for round in 0..100 {
                let name = format!("k{}", round % size);
                assert!(properties.remove(&name).is_some(), "size {size}, round {round}");
                assert_eq!(properties.get(&name), None);
                properties.insert(name.clone(), format!("again {round}"));
                assert_eq!(properties.get(&name), Some(format!("again {round}").as_str()));
                for probe in 0..size {
                    assert!(
                        properties.get(&format!("k{probe}")).is_some(),
                        "size {size}, k{probe}"
                    );
                }
                assert_eq!(properties.get("absent"), None);
            }
        }
    }

    #[test]
    fn reads_json_leniently() -> Result<(), serde_json::Error> {
        let properties: Properties = serde_json::from_str(r#"{"a":"x","n":1,"b":true,"z":null,"o":{}}"#)?;
        assert_eq!(properties.get("a"), Some("x"));
        assert_eq!(properties.get("n"), Some("1"));
        assert_eq!(properties.get("b"), Some("true"));
        assert_eq!(properties.len(), 3);
        let none: Properties = serde_json::from_str("null")?;
        assert!(none.is_empty());
        Ok(())
    }
}
