// One KafkaJS action per run, for the compatibility suite: the command is JSON in argv[2]; results and
// events are JSON lines on stdout; a consumer runs until it reads "stop" on stdin, then disconnects.
'use strict'

const readline = require('readline')
const { Kafka, CompressionTypes, CompressionCodecs, AssignerProtocol, PartitionAssigners, logLevel } = require('kafkajs')
const SnappyCodec = require('kafkajs-snappy')

CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec

const COMPRESSION = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
}

const cmd = JSON.parse(process.argv[2])

function emit(event) {
  process.stdout.write(JSON.stringify(event) + '\n')
}

const b64 = (buf) => (buf === null || buf === undefined ? null : Buffer.from(buf).toString('base64'))
const unb64 = (s) => (s === null ? null : Buffer.from(s, 'base64'))

const kafka = new Kafka({
  clientId: cmd.name || 'kafkajs-compat',
  brokers: [cmd.bootstrap],
  logLevel: logLevel.WARN,
  logCreator: () => ({ namespace, level, log }) => {
    process.stderr.write(JSON.stringify({ level, namespace, message: log.message, error: log.error }) + '\n')
  },
  retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 30 },
})

// Kafka's range assignor: per topic, members sorted by id get consecutive partitions, the first ones
// one more when the partitions do not divide evenly. KafkaJS ships only round robin; custom
// assigners are its documented extension point.
const RangeAssigner = ({ cluster }) => ({
  name: 'range',
  version: 0,
  async assign({ members }) {
    const subscribers = {}
    for (const m of members) {
      for (const topic of AssignerProtocol.MemberMetadata.decode(m.memberMetadata).topics) {
        ;(subscribers[topic] = subscribers[topic] || []).push(m.memberId)
      }
    }
    const plan = {}
    for (const m of members) plan[m.memberId] = {}
    for (const [topic, ids] of Object.entries(subscribers)) {
      ids.sort()
      const partitions = cluster
        .findTopicPartitionMetadata(topic)
        .map((p) => p.partitionId)
        .sort((a, b) => a - b)
      const per = Math.floor(partitions.length / ids.length)
      const extra = partitions.length % ids.length
      ids.forEach((id, i) => {
        const start = per * i + Math.min(i, extra)
        const length = per + (i < extra ? 1 : 0)
        if (length > 0) plan[id][topic] = partitions.slice(start, start + length)
      })
    }
    return members.map((m) => ({
      memberId: m.memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: plan[m.memberId], userData: Buffer.alloc(0) }),
    }))
  },
  protocol({ topics }) {
    return { name: 'range', metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) }
  },
})

function record(topic, partition, message) {
  const headers = []
  for (const [key, value] of Object.entries(message.headers || {})) {
    for (const v of Array.isArray(value) ? value : [value]) headers.push([key, b64(v)])
  }
  return {
    type: 'record',
    topic,
    partition,
    offset: message.offset,
    key: b64(message.key),
    value: b64(message.value),
    headers,
    timestamp: message.timestamp,
  }
}

function untilStop() {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin })
    rl.on('line', (line) => {
      if (line.trim() === 'stop') resolve()
    })
    rl.on('close', resolve)
  })
}

async function consume() {
  const group = cmd.group
  const consumer = kafka.consumer({
    groupId: group,
    sessionTimeout: 6000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 200,
    readUncommitted: Boolean(cmd.readUncommitted), // KafkaJS reads read_committed by default
    partitionAssigners: [cmd.assignor === 'roundrobin' ? PartitionAssigners.roundRobin : RangeAssigner],
  })
  let joined = false
  let ready = false
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    joined = true
    emit({ type: 'assigned', partitions: (e.payload.memberAssignment || {})[cmd.topic] || [] })
  })
  consumer.on(consumer.events.FETCH, () => {
    if (joined && !ready) {
      ready = true // offsets are resolved once a fetch has completed
      emit({ type: 'ready' })
    }
  })
  consumer.on(consumer.events.CRASH, (e) => {
    emit({ type: 'crash', error: String(e.payload.error), restart: e.payload.restart })
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [cmd.topic], fromBeginning: cmd.start !== 'latest' })
  await consumer.run({
    autoCommit: !cmd.commit,
    eachMessage: async ({ topic, partition, message }) => {
      emit(record(topic, partition, message))
      if (cmd.commit) {
        // Synchronous commit of the record just processed, before the next one.
        const next = (BigInt(message.offset) + 1n).toString()
        await consumer.commitOffsets([{ topic, partition, offset: next }])
      }
    },
  })
  await untilStop()
  await consumer.disconnect()
  emit({ type: 'closed' })
}

async function withAdmin(fn) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    return await fn(admin)
  } finally {
    await admin.disconnect()
  }
}

function toMessage(r) {
  const headers = {}
  for (const [k, v] of r.headers) (headers[k] = headers[k] || []).push(unb64(v))
  const m = { partition: r.partition, key: unb64(r.key), value: unb64(r.value), headers }
  if (r.timestamp !== null) m.timestamp = String(r.timestamp)
  return m
}

async function produce() {
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  try {
    const messages = cmd.records.map(toMessage)
    await producer.send({ topic: cmd.topic, acks: -1, compression: COMPRESSION[cmd.codec], messages })
  } finally {
    await producer.disconnect()
  }
  emit({ type: 'produced' })
}

// Transactions, one per step: send the step's records (and its group offsets, if any), then commit
// or abort. A transactional KafkaJS producer is idempotent with one request in flight.
async function transaction() {
  const producer = kafka.producer({
    transactionalId: cmd.transactionalId,
    idempotent: true,
    maxInFlightRequests: 1,
    transactionTimeout: cmd.transactionTimeout || 60000,
    allowAutoTopicCreation: false,
  })
  await producer.connect()
  try {
    for (const step of cmd.steps) {
      const txn = await producer.transaction()
      await txn.send({ topic: cmd.topic, acks: -1, compression: COMPRESSION[cmd.codec || 'none'], messages: step.records.map(toMessage) })
      if (step.offsets) {
        const partitions = Object.entries(step.offsets.partitions).map(([p, o]) => ({ partition: Number(p), offset: String(o) }))
        await txn.sendOffsets({ consumerGroupId: step.offsets.group, topics: [{ topic: step.offsets.topic, partitions }] })
      }
      if (step.commit) await txn.commit()
      else await txn.abort()
      emit({ type: 'transaction', commit: step.commit })
    }
  } finally {
    await producer.disconnect()
  }
}

const ops = {
  consume,
  produce,
  transaction,
  metadata: () =>
    withAdmin(async (admin) => {
      const cluster = await admin.describeCluster()
      const { topics } = await admin.fetchTopicMetadata({ topics: [cmd.topic] })
      emit({
        type: 'metadata',
        clusterId: cluster.clusterId,
        brokers: cluster.brokers.map((b) => [b.nodeId, b.host, b.port]),
        partitions: topics[0].partitions.map((p) => [p.partitionId, p.leader]),
      })
    }),
  'create-topic': () =>
    withAdmin(async (admin) => {
      const created = await admin.createTopics({ topics: [{ topic: cmd.topic, numPartitions: cmd.partitions }], waitForLeaders: true })
      emit({ type: 'created', created })
    }),
  'delete-topic': () =>
    withAdmin(async (admin) => {
      await admin.deleteTopics({ topics: [cmd.topic] })
      emit({ type: 'deleted' })
    }),
  'list-topics': () => withAdmin(async (admin) => emit({ type: 'topics', topics: await admin.listTopics() })),
  'commit-fetch': () =>
    withAdmin(async (admin) => {
      const partitions = Object.entries(cmd.offsets).map(([p, o]) => ({ partition: Number(p), offset: String(o) }))
      await admin.setOffsets({ groupId: cmd.group, topic: cmd.topic, partitions })
      const fetched = await admin.fetchOffsets({ groupId: cmd.group, topics: [cmd.topic] })
      emit({ type: 'offsets', partitions: fetched[0].partitions.map((p) => [p.partition, Number(p.offset), p.metadata]) })
    }),
  'describe-group': () =>
    withAdmin(async (admin) => {
      const { groups: listed } = await admin.listGroups()
      const { groups } = await admin.describeGroups([cmd.group])
      const g = groups[0]
      emit({
        type: 'group',
        listed: listed.map((l) => [l.groupId, l.protocolType]),
        errorCode: g.errorCode,
        state: g.state,
        protocolType: g.protocolType,
        protocol: g.protocol,
        members: g.members.map((m) => [m.clientId, AssignerProtocol.MemberAssignment.decode(m.memberAssignment).assignment]),
      })
    }),
}

ops[cmd.op]().then(
  () => process.exit(0),
  (err) => {
    emit({ type: 'error', error: String(err && err.stack ? err.stack : err) })
    process.exit(1)
  }
)
