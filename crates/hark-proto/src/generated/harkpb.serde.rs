impl serde::Serialize for DuRequest {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.prefix.is_empty() {
            len += 1;
        }
        if self.depth != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("harkpb.DuRequest", len)?;
        if !self.prefix.is_empty() {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field(
                "prefix",
                pbjson::private::base64::encode(&self.prefix).as_str(),
            )?;
        }
        if self.depth != 0 {
            struct_ser.serialize_field("depth", &self.depth)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for DuRequest {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &["prefix", "depth"];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Prefix,
            Depth,
            __SkipField__,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(
                        &self,
                        formatter: &mut std::fmt::Formatter<'_>,
                    ) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "prefix" => Ok(GeneratedField::Prefix),
                            "depth" => Ok(GeneratedField::Depth),
                            _ => Ok(GeneratedField::__SkipField__),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = DuRequest;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct harkpb.DuRequest")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<DuRequest, V::Error>
            where
                V: serde::de::MapAccess<'de>,
            {
                let mut prefix__ = None;
                let mut depth__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Prefix => {
                            if prefix__.is_some() {
                                return Err(serde::de::Error::duplicate_field("prefix"));
                            }
                            prefix__ = Some(
                                map_.next_value::<::pbjson::private::BytesDeserialize<_>>()?
                                    .0,
                            );
                        }
                        GeneratedField::Depth => {
                            if depth__.is_some() {
                                return Err(serde::de::Error::duplicate_field("depth"));
                            }
                            depth__ = Some(
                                map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?
                                    .0,
                            );
                        }
                        GeneratedField::__SkipField__ => {
                            let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(DuRequest {
                    prefix: prefix__.unwrap_or_default(),
                    depth: depth__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("harkpb.DuRequest", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for DuResponse {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.header.is_some() {
            len += 1;
        }
        if !self.prefixes.is_empty() {
            len += 1;
        }
        if self.tracked_depth != 0 {
            len += 1;
        }
        if self.truncated {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("harkpb.DuResponse", len)?;
        if let Some(v) = self.header.as_ref() {
            struct_ser.serialize_field("header", v)?;
        }
        if !self.prefixes.is_empty() {
            struct_ser.serialize_field("prefixes", &self.prefixes)?;
        }
        if self.tracked_depth != 0 {
            struct_ser.serialize_field("tracked_depth", &self.tracked_depth)?;
        }
        if self.truncated {
            struct_ser.serialize_field("truncated", &self.truncated)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for DuResponse {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "header",
            "prefixes",
            "tracked_depth",
            "trackedDepth",
            "truncated",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Header,
            Prefixes,
            TrackedDepth,
            Truncated,
            __SkipField__,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(
                        &self,
                        formatter: &mut std::fmt::Formatter<'_>,
                    ) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "header" => Ok(GeneratedField::Header),
                            "prefixes" => Ok(GeneratedField::Prefixes),
                            "trackedDepth" | "tracked_depth" => Ok(GeneratedField::TrackedDepth),
                            "truncated" => Ok(GeneratedField::Truncated),
                            _ => Ok(GeneratedField::__SkipField__),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = DuResponse;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct harkpb.DuResponse")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<DuResponse, V::Error>
            where
                V: serde::de::MapAccess<'de>,
            {
                let mut header__ = None;
                let mut prefixes__ = None;
                let mut tracked_depth__ = None;
                let mut truncated__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Header => {
                            if header__.is_some() {
                                return Err(serde::de::Error::duplicate_field("header"));
                            }
                            header__ = map_.next_value()?;
                        }
                        GeneratedField::Prefixes => {
                            if prefixes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("prefixes"));
                            }
                            prefixes__ = Some(map_.next_value()?);
                        }
                        GeneratedField::TrackedDepth => {
                            if tracked_depth__.is_some() {
                                return Err(serde::de::Error::duplicate_field("trackedDepth"));
                            }
                            tracked_depth__ = Some(
                                map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?
                                    .0,
                            );
                        }
                        GeneratedField::Truncated => {
                            if truncated__.is_some() {
                                return Err(serde::de::Error::duplicate_field("truncated"));
                            }
                            truncated__ = Some(map_.next_value()?);
                        }
                        GeneratedField::__SkipField__ => {
                            let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(DuResponse {
                    header: header__,
                    prefixes: prefixes__.unwrap_or_default(),
                    tracked_depth: tracked_depth__.unwrap_or_default(),
                    truncated: truncated__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("harkpb.DuResponse", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for PrefixUsage {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.prefix.is_empty() {
            len += 1;
        }
        if self.depth != 0 {
            len += 1;
        }
        if self.keys != 0 {
            len += 1;
        }
        if self.bytes != 0 {
            len += 1;
        }
        if self.revisions != 0 {
            len += 1;
        }
        if self.history_bytes != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("harkpb.PrefixUsage", len)?;
        if !self.prefix.is_empty() {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field(
                "prefix",
                pbjson::private::base64::encode(&self.prefix).as_str(),
            )?;
        }
        if self.depth != 0 {
            struct_ser.serialize_field("depth", &self.depth)?;
        }
        if self.keys != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("keys", ToString::to_string(&self.keys).as_str())?;
        }
        if self.bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("bytes", ToString::to_string(&self.bytes).as_str())?;
        }
        if self.revisions != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser
                .serialize_field("revisions", ToString::to_string(&self.revisions).as_str())?;
        }
        if self.history_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field(
                "history_bytes",
                ToString::to_string(&self.history_bytes).as_str(),
            )?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for PrefixUsage {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "prefix",
            "depth",
            "keys",
            "bytes",
            "revisions",
            "history_bytes",
            "historyBytes",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Prefix,
            Depth,
            Keys,
            Bytes,
            Revisions,
            HistoryBytes,
            __SkipField__,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(
                        &self,
                        formatter: &mut std::fmt::Formatter<'_>,
                    ) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "prefix" => Ok(GeneratedField::Prefix),
                            "depth" => Ok(GeneratedField::Depth),
                            "keys" => Ok(GeneratedField::Keys),
                            "bytes" => Ok(GeneratedField::Bytes),
                            "revisions" => Ok(GeneratedField::Revisions),
                            "historyBytes" | "history_bytes" => Ok(GeneratedField::HistoryBytes),
                            _ => Ok(GeneratedField::__SkipField__),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = PrefixUsage;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct harkpb.PrefixUsage")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<PrefixUsage, V::Error>
            where
                V: serde::de::MapAccess<'de>,
            {
                let mut prefix__ = None;
                let mut depth__ = None;
                let mut keys__ = None;
                let mut bytes__ = None;
                let mut revisions__ = None;
                let mut history_bytes__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Prefix => {
                            if prefix__.is_some() {
                                return Err(serde::de::Error::duplicate_field("prefix"));
                            }
                            prefix__ = Some(
                                map_.next_value::<::pbjson::private::BytesDeserialize<_>>()?
                                    .0,
                            );
                        }
                        GeneratedField::Depth => {
                            if depth__.is_some() {
                                return Err(serde::de::Error::duplicate_field("depth"));
                            }
                            depth__ = Some(
                                map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?
                                    .0,
                            );
                        }
                        GeneratedField::Keys => {
                            if keys__.is_some() {
                                return Err(serde::de::Error::duplicate_field("keys"));
                            }
                            keys__ = Some(
                                map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?
                                    .0,
                            );
                        }
                        GeneratedField::Bytes => {
                            if bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("bytes"));
                            }
                            bytes__ = Some(
                                map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?
                                    .0,
                            );
                        }
                        GeneratedField::Revisions => {
                            if revisions__.is_some() {
                                return Err(serde::de::Error::duplicate_field("revisions"));
                            }
                            revisions__ = Some(
                                map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?
                                    .0,
                            );
                        }
                        GeneratedField::HistoryBytes => {
                            if history_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("historyBytes"));
                            }
                            history_bytes__ = Some(
                                map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?
                                    .0,
                            );
                        }
                        GeneratedField::__SkipField__ => {
                            let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(PrefixUsage {
                    prefix: prefix__.unwrap_or_default(),
                    depth: depth__.unwrap_or_default(),
                    keys: keys__.unwrap_or_default(),
                    bytes: bytes__.unwrap_or_default(),
                    revisions: revisions__.unwrap_or_default(),
                    history_bytes: history_bytes__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("harkpb.PrefixUsage", FIELDS, GeneratedVisitor)
    }
}
