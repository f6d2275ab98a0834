//! The packet replication engine (simple_pre): multicast groups of L1
//! nodes, each node a replication id (rid) with a set of ports.

use std::collections::BTreeMap;

/// The packet replication engine (simple_pre): groups of L1 nodes (rid),
/// each with a set of ports.
#[derive(Clone, Debug, Default)]
pub struct Pre {
    groups: BTreeMap<u32, Vec<u32>>,
    nodes: Vec<Option<(u32, Vec<u32>)>>,
}

impl Pre {
    pub fn group_create(&mut self, mgid: u32) -> u32 {
        self.groups.entry(mgid).or_default();
        mgid
    }

    pub fn group_destroy(&mut self, mgid: u32) {
        self.groups.remove(&mgid);
    }

    pub fn node_create(&mut self, rid: u32, ports: &[u32]) -> u32 {
        let mut p: Vec<u32> = ports.to_vec();
        p.sort_unstable();
        p.dedup();
        self.nodes.push(Some((rid, p)));
        self.nodes.len() as u32 - 1
    }

    pub fn node_update(&mut self, node: u32, ports: &[u32]) -> bool {
        match self.nodes.get_mut(node as usize) {
            Some(Some(n)) => {
                let mut p: Vec<u32> = ports.to_vec();
                p.sort_unstable();
                p.dedup();
                n.1 = p;
                true
            }
            _ => false,
        }
    }

    pub fn node_associate(&mut self, mgid: u32, node: u32) -> bool {
        if !matches!(self.nodes.get(node as usize), Some(Some(_))) {
            return false;
        }
        match self.groups.get_mut(&mgid) {
            Some(g) => {
                g.push(node);
                true
            }
            None => false,
        }
    }

    pub fn node_dissociate(&mut self, mgid: u32, node: u32) -> bool {
        match self.groups.get_mut(&mgid) {
            Some(g) => {
                g.retain(|n| *n != node);
                true
            }
            None => false,
        }
    }

    /// (rid, port) copies for a group, in BMv2's order.
    pub(crate) fn replicate(&self, mgid: u32, out: &mut Vec<(u32, u32)>) {
        out.clear();
        if let Some(g) = self.groups.get(&mgid) {
            for n in g {
                if let Some(Some((rid, ports))) = self.nodes.get(*n as usize) {
                    for p in ports {
                        out.push((*rid, *p));
                    }
                }
            }
        }
    }
}

