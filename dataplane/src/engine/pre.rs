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

    /// Destroys a node, leaving every group it was in; false if there is none.
    pub fn node_destroy(&mut self, node: u32) -> bool {
        match self.nodes.get_mut(node as usize) {
            Some(n @ Some(_)) => {
                *n = None;
                for g in self.groups.values_mut() {
                    g.retain(|m| *m != node);
                }
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


#[cfg(test)]
mod tests {
    use super::Pre;

    #[test]
    fn a_destroyed_node_leaves_its_groups_and_is_gone() {
        let mut pre = Pre::default();
        pre.group_create(1);
        let a = pre.node_create(7, &[2, 1]);
        let b = pre.node_create(8, &[3]);
        assert!(pre.node_associate(1, a) && pre.node_associate(1, b));
        let mut out = vec![];
        pre.replicate(1, &mut out);
        assert_eq!(out, vec![(7, 1), (7, 2), (8, 3)]);
        assert!(pre.node_destroy(a));
        pre.replicate(1, &mut out);
        assert_eq!(out, vec![(8, 3)]);
        assert!(!pre.node_destroy(a), "destroyed twice");
        assert!(!pre.node_update(a, &[4]) && !pre.node_associate(1, a));
    }
}
