@testable import EntityStore

/// The reference a `SortedMap` is checked against: a plain sorted array of pairs.
struct SortedMapModel {
    private(set) var elements: [(key: Int, value: Int)] = []

    var keys: [Int] { elements.map(\.key) }

    func index(of key: Int) -> (found: Bool, index: Int) {
        var low = 0
        var high = elements.count
        while low < high {
            let middle = (low + high) / 2
            if elements[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return (low < elements.count && elements[low].key == key, low)
    }

    subscript(key: Int) -> Int? {
        let (found, index) = index(of: key)
        return found ? elements[index].value : nil
    }

    mutating func updateValue(_ value: Int, forKey key: Int) -> Int? {
        let (found, index) = index(of: key)
        if found {
            let old = elements[index].value
            elements[index].value = value
            return old
        }
        elements.insert((key, value), at: index)
        return nil
    }

    mutating func removeValue(forKey key: Int) -> Int? {
        let (found, index) = index(of: key)
        return found ? elements.remove(at: index).value : nil
    }

    func elements(in range: SortedMapRange<Int>) -> [(key: Int, value: Int)] {
        elements.filter { element in
            switch range.lowerBound {
            case .included(let low)?: if element.key < low { return false }
            case .excluded(let low)?: if element.key <= low { return false }
            case nil: break
            }
            switch range.upperBound {
            case .included(let high)?: if element.key > high { return false }
            case .excluded(let high)?: if element.key >= high { return false }
            case nil: break
            }
            return true
        }
    }
}

/// Compares element sequences by key and value (tuples are not Equatable).
func sameElements(
    _ lhs: some Sequence<(key: Int, value: Int)>,
    _ rhs: some Sequence<(key: Int, value: Int)>
) -> Bool {
    let left = Array(lhs)
    let right = Array(rhs)
    return left.count == right.count && zip(left, right).allSatisfy { $0.key == $1.key && $0.value == $1.value }
}

/// Every node of the tree, by identity, to measure how much two versions share.
func nodeIdentities(_ map: SortedMap<Int, Int>) -> Set<ObjectIdentifier> {
    var result: Set<ObjectIdentifier> = []
    var stack = map.root.map { [$0] } ?? []
    while let node = stack.popLast() {
        result.insert(ObjectIdentifier(node))
        stack.append(contentsOf: node.children)
    }
    return result
}

/// The number of node levels (0 for an empty map).
func height(_ map: SortedMap<Int, Int>) -> Int {
    var levels = 0
    var node = map.root
    while let current = node {
        levels += 1
        node = current.children.first
    }
    return levels
}
