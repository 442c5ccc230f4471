// KafkaJS over SASL (and TLS): produce, consume in a group, commit, read the commit back; or a login
// that must fail. The command is JSON in argv[2]; the outcome is one JSON line on stdout.
'use strict'

const fs = require('fs')
const path = require('path')
const { Kafka, logLevel } = require(path.join(__dirname, '..', 'compat', 'node', 'node_modules', 'kafkajs'))

const cmd = JSON.parse(process.argv[2])
const kafka = new Kafka({
  clientId: 'kafkajs-secure',
  brokers: [cmd.bootstrap],
  ssl: cmd.ca ? { ca: [fs.readFileSync(cmd.ca, 'utf-8')] } : false,
  sasl: { mechanism: cmd.mechanism, username: cmd.user, password: cmd.password },
  logLevel: logLevel.NOTHING,
  retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: cmd.op === 'login' ? 0 : 10 },
})

async function roundTrip() {
  const topic = cmd.topic
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
  const producer = kafka.producer()
  await producer.connect()
  const values = Array.from({ length: 10 }, (_, i) => `record-${i}`)
  await producer.send({ topic, messages: values.map((value) => ({ value })) })
  await producer.disconnect()
  const consumer = kafka.consumer({ groupId: cmd.group })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  const got = []
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out consuming')), 60000)
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        got.push(message.value.toString())
        if (got.length === values.length) {
          await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }])
          clearTimeout(timer)
          resolve()
        }
      },
    })
  })
  await consumer.disconnect()
  const committed = await admin.fetchOffsets({ groupId: cmd.group, topics: [topic] })
  await admin.disconnect()
  return { got, committed: committed[0].partitions[0].offset }
}

async function login() {
  const admin = kafka.admin()
  try {
    await admin.connect()
    await admin.listTopics()
    return { error: null }
  } catch (e) {
    return { error: e.name, message: e.message }
  } finally {
    await admin.disconnect()
  }
}

;(cmd.op === 'login' ? login() : roundTrip()).then(
  (result) => process.stdout.write(JSON.stringify(result) + '\n'),
  (e) => {
    process.stdout.write(JSON.stringify({ failed: e.name, message: e.message }) + '\n')
    process.exitCode = 1
  }
)
